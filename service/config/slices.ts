import type { SecurityOptions } from '../../gateway/mod.ts'
import type { ObservabilitySettings } from '../../observability/config.ts'
import { resolveEngines, type EngineList } from '../../runner/engine/config.ts'
import type { StateSettings } from '../../state/config.ts'
import type { Config } from './schema.ts'

/** Each part's slice of the configuration: the part declares what it needs, these pick it out. */

/** The gateway's security options (gateway/server.ts). */
export function securityOptions(config: Config): SecurityOptions {
  return {
    auth: config.auth,
    limits: config.limits,
    pingIntervalMs: config.server.ping_interval,
    taskPulseMs: config.server.task_pulse,
    http: { requestTimeoutMs: config.server.request_timeout, headersTimeoutMs: config.server.headers_timeout },
    host: config.server.host,
    wsDialect: config.server.ws_dialect,
  }
}

/** The state's settings (state/config.ts); which backend to open is the caller's choice (service/state.ts). */
export function stateSettings(config: Config): StateSettings {
  const { backend: _backend, ...state } = config.state
  return { ...state, prefix: config.nats.prefix, durable_dir: config.session.marker_dir }
}

/** Observability's settings (observability/config.ts). */
export function observabilitySettings(config: Config): ObservabilitySettings {
  return {
    namespace: config.namespace,
    subjectPrefix: config.nats.prefix,
    otel: config.otel,
    httpPort: config.runner.http_port,
    host: config.server.host,
    readiness: config.server.readiness,
  }
}

/** The engines sessions can run (validated with the config, so never refused here). */
export function engineList(config: Config): EngineList {
  const resolved = resolveEngines(config.engine, config.engines)
  if ('problems' in resolved) throw new Error(resolved.problems.map((problem) => problem.message).join('; '))
  return resolved
}
