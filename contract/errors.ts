import { z } from 'zod'

/**
 * The one error registry: every failure a client can see has a stable code and
 * an HTTP status. WebSocket `error` events, bus replies and HTTP bodies all
 * carry the same `{code, message}` shape built from these entries.
 */
export const ErrorCodes = {
  BAD_JSON: { status: 400, summary: 'the frame or body is not valid JSON' },
  BAD_REQUEST: { status: 400, summary: 'a field is missing or has the wrong type' },
  UNKNOWN_TYPE: { status: 400, summary: 'the request type is not one this surface knows' },
  WORK_DIR_REJECTED: { status: 400, summary: 'work_dir escapes the sandbox base directory' },
  WORK_DIR_MISMATCH: { status: 409, summary: 'work_dir differs from the one the session was created with' },
  SESSION_NOT_FOUND: { status: 404, summary: 'no session has this id' },
  QUEUE_FULL: { status: 429, summary: 'too many prompts are waiting for this session' },
  RUNNER_UNAVAILABLE: { status: 503, summary: 'no runner answered the command' },
  RUNNER_TIMEOUT: { status: 504, summary: 'the runner did not reply in time' },
  ENGINE_START_FAILED: { status: 500, summary: 'the agent CLI could not be started' },
  ENGINE_EXITED: { status: 500, summary: 'the agent CLI exited before the turn ended' },
  ENGINE_ERROR: { status: 500, summary: 'the agent CLI reported a failed turn' },
  TURN_TIMEOUT: { status: 504, summary: 'the turn ran longer than engine.timeout' },
  INTERNAL: { status: 500, summary: 'an unexpected failure inside the service' },
  RUNNER_LOST: { status: 500, summary: 'the runner running the turn died; the next execute continues the conversation on another runner' },
  SANDBOX_NOT_READY: { status: 504, summary: 'the sandbox pod did not become ready within controller.pod_ready_timeout' },
  SANDBOX_LOST: { status: 503, summary: 'the sandbox pod of the session was lost (evicted, node gone); the next execute is placed again' },
  NOT_OWNER: { status: 409, summary: 'between gateway and runner: this runner does not own the session (the gateway re-routes)' },
  PERMISSION_NOT_FOUND: {
    status: 404,
    summary: 'the session has no permission request or question with this id waiting (never asked, or asked by a runner that no longer owns the session)',
  },
  ALREADY_ANSWERED: { status: 409, summary: 'the permission request or question was settled already (by another client, a rule or its timeout)' },
  WAF_BLOCKED: { status: 403, summary: 'the WAF blocked a prompt or a tool call; `waf` names the rule' },
  UNAUTHORIZED: { status: 401, summary: 'the API key is missing or not one of the configured keys' },
  FORBIDDEN_ORIGIN: { status: 403, summary: 'a browser Origin that is not in SERVICE_ALLOWED_ORIGINS' },
  ROUTE_NOT_FOUND: { status: 404, summary: 'no route has this method and path' },
  CONSOLE_NOT_BUILT: { status: 503, summary: "the web console's script is not built: run `npm run build` (npm start does), then restart the service" },
  PAYLOAD_TOO_LARGE: { status: 413, summary: 'the body or WebSocket frame is larger than the configured limit' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, summary: 'the body has a Content-Type this route does not read' },
  UPGRADE_REQUIRED: { status: 426, summary: 'a plain HTTP request to the WebSocket route' },
  REQUEST_TIMEOUT: { status: 408, summary: "the request did not arrive in full within the server's time" },
  HEADERS_TOO_LARGE: { status: 431, summary: 'the request line and headers are larger than the HTTP server reads (16 KiB)' },
  RATE_LIMITED: { status: 429, summary: 'too many requests for this API key; retry after Retry-After seconds' },
  TOO_MANY_CONNECTIONS: { status: 429, summary: 'this client address has limits.max_connections_per_ip connections open; close or reuse some' },
  OVERLOADED: { status: 503, summary: 'the service runs as many sessions as it may; retry with backoff' },
  SHUTTING_DOWN: { status: 503, summary: 'the service is shutting down and takes no new work; retry elsewhere' },
} as const satisfies Record<string, { status: number; summary: string }>

export type ErrorCode = keyof typeof ErrorCodes

/** The wire shape of every error: WebSocket and SSE `error` events, bus replies, HTTP bodies. */
export const ErrorBody = z.object({
  code: z.enum(Object.keys(ErrorCodes) as [ErrorCode, ...ErrorCode[]]),
  message: z.string(),
})
export type ErrorBody = z.output<typeof ErrorBody>

/** A failure with a stable code; `cause` keeps the original failure. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError'
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
  get status(): number {
    return ErrorCodes[this.code].status
  }
  toBody(): ErrorBody {
    return { code: this.code, message: this.message }
  }
}

/** Turns anything thrown into a ServiceError, keeping the original as cause. */
export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err
  const message = err instanceof Error ? err.message : String(err)
  return new ServiceError('INTERNAL', message, { cause: err })
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCodes, value)
}
