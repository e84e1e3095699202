import { z } from 'zod'

/**
 * Config keys of observability. `otel` is a section of its own; the runner's
 * probe and metrics port is one key of the `runner` section.
 */

/** The `otel` section: OpenTelemetry traces. Env: OTEL_ENDPOINT, OTEL_SERVICE_NAME, OTEL_SAMPLING_RATE. */
export const OtelConfigSchema = z.strictObject({
  /**
   * The collector's OTLP/HTTP address, `host:port` (a URL with a scheme and
   * path is taken as it is). Unset: no tracing, and no tracing code is loaded.
   */
  endpoint: z.string().min(1).optional(),
  /** `service.name` of the traces. */
  service_name: z.string().min(1).default('agent-runtime'),
  /** Share of traces kept, 0 to 1 (1.0 = all); a runner follows the gateway's decision. The env gives it as text. */
  sampling_rate: z.coerce.number().min(0).max(1).default(1),
})

export type OtelConfig = z.output<typeof OtelConfigSchema>

/**
 * `runner.http_port`: in runner mode, the port of a small HTTP server for
 * /health, /health/ready, /health/live and /metrics (0 = any free port).
 * Unset: no server. Env: RUNNER_HTTP_PORT.
 */
export const RunnerHttpPort = z.number().int().min(0).max(65535).optional()

/**
 * `server.readiness`: what a gateway's GET /health/ready waits for.
 * `runner` (default): a runner answers on the bus and its agent CLI answers `--version`.
 * `bus`: the NATS connection only, for Kubernetes, where the controller makes
 * runner pods on demand (with `warmPool: 0` there is no runner until a session asks
 * for one). Env: SERVICE_READINESS. The chart sets `bus`.
 */
export const GatewayReadiness = z.enum(['runner', 'bus']).default('runner')

/** What startObservability needs of the configuration. */
export interface ObservabilitySettings {
  /** The deployment's name (`namespace`), on every span. */
  namespace: string
  /** The subject prefix (`nats.prefix`) readiness pings the bus under. */
  subjectPrefix: string
  otel: OtelConfig
  /** Runner mode: the probe and metrics server's port (`runner.http_port`); unset: no server. */
  httpPort: number | undefined
  /** Its bind address (`server.host`). */
  host: string
  /** Gateway and dev modes: what readiness waits for (`server.readiness`). */
  readiness: z.output<typeof GatewayReadiness>
}
