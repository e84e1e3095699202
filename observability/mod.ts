/** Observability: Prometheus metrics, OpenTelemetry traces, health probes, log redaction. */
export { startObservability } from './setup.ts'
export type { Observability, ObservabilityOptions } from './setup.ts'
export { Metrics } from './metrics.ts'
export { GatewayReadiness, OtelConfigSchema, RunnerHttpPort } from './config.ts'
export type { ObservabilitySettings, OtelConfig } from './config.ts'
export { LOG_REDACT_PATHS, secretsOf, scrubber } from './redact.ts'
