import { DurationField } from '../config/fields.ts'
import type { Config } from '../config/schema.ts'
import type { SecurityOptions } from '../gateway/server.ts'

/** Keys of the `server` section about connection keep-alive, request timeouts and shutdown (spread into it by config/schema.ts). */
export const ServerTimingShape = {
  /** SIGTERM: how long running turns may go on before every session is stopped. */
  shutdown_grace: DurationField('30s'),
  /** WebSocket ping period; a client that misses one pong is disconnected (0 = no pings). */
  ping_interval: DurationField('30s'),
  /** Period of `task_boundary` pulses while a tool runs (0 = none). */
  task_pulse: DurationField('30s'),
  /** A request (headers and body) not received in full within this is answered 408 REQUEST_TIMEOUT and its connection closed (0 = none). */
  request_timeout: DurationField('30s'),
  /** Request line and headers not received within this: 408 REQUEST_TIMEOUT (at most `request_timeout`). */
  headers_timeout: DurationField('10s', { allowZero: false }),
}

/** The gateway's security options (gateway/server.ts) from the configuration. */
export function securityOptions(config: Config): SecurityOptions {
  return {
    auth: config.auth,
    limits: config.limits,
    pingIntervalMs: config.server.ping_interval,
    taskPulseMs: config.server.task_pulse,
    http: { requestTimeoutMs: config.server.request_timeout, headersTimeoutMs: config.server.headers_timeout },
    host: config.server.host,
  }
}
