import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { z } from 'zod'
import { ServiceError, toServiceError, type ErrorCode } from '../contract/mod.ts'
import { RateLimitedError } from './limits/rate-limiter.ts'

/**
 * HTTP errors of the service's own routes (WebSocket handshake, probes,
 * metrics, unknown paths) have one body shape, `{code, message}`, with the
 * status of the code's registry entry. The OpenCode routes keep OpenCode's
 * `{name, data}` (gateway/opencode/errors.ts) and POST /v1/agent/chat its
 * `{error: {code, message}}`; all three take their code from here.
 */

/** fastify's own failures by their `code` (body parsing, content type, size). */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_JSON',
  FST_ERR_CTP_EMPTY_TYPE: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_TYPE: 'BAD_REQUEST',
  FST_ERR_VALIDATION: 'BAD_REQUEST',
}

/** Any failure as a ServiceError, fastify's own included; the original is kept as cause. */
export function toHttpError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err
  const fastify = err as Partial<FastifyError> | null
  const known = typeof fastify?.code === 'string' ? FASTIFY_CODES[fastify.code] : undefined
  if (known !== undefined) return new ServiceError(known, String(fastify!.message), { cause: err })
  const status = fastify?.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // JSON.parse failures from content parsers are SyntaxErrors with status 400.
    const code: ErrorCode =
      status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : err instanceof SyntaxError ? 'BAD_JSON' : 'BAD_REQUEST'
    return new ServiceError(code, String(fastify!.message), { cause: err })
  }
  return toServiceError(err)
}

/**
 * The message of a BAD_REQUEST for a schema failure, naming the field:
 * `field "prompt" is required` only when the field is absent, `field
 * "prompt": expected string, got number` when its type is wrong, else the
 * schema's own message. `input` is what was validated: zod does not keep the
 * value in its issues, so "absent" is read from the input itself.
 */
export function invalidFieldMessage(issue: z.core.$ZodIssue, input: unknown, whole = 'body'): string {
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : whole
  if (issue.code !== 'invalid_type') return `field "${field}": ${issue.message}`
  const found = valueAt(input, issue.path)
  if (found === ABSENT) return `field "${field}" is required`
  return `field "${field}": expected ${issue.expected}, got ${typeOf(found.value)}`
}

const ABSENT = Symbol('absent')

/** The value at `path` in `input`, or ABSENT when it (or a parent) is missing or undefined. */
function valueAt(input: unknown, path: readonly PropertyKey[]): { value: unknown } | typeof ABSENT {
  let current = input
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return ABSENT
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current === undefined ? ABSENT : { value: current }
}

/** A JSON value's type as a client would name it. */
function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/**
 * The one `Retry-After` rule, in whole seconds (at least 1): the rate limiter's wait for RATE_LIMITED,
 * `defaultMs` (`limits.retry_after`) for any other 429 or 503 answer; none for other statuses.
 */
export function retryAfterSeconds(answer: ServiceError | { status: number }, defaultMs: number): number | undefined {
  const waitMs = answer instanceof RateLimitedError ? answer.retryAfterMs : answer.status === 503 || answer.status === 429 ? defaultMs : undefined
  return waitMs === undefined ? undefined : Math.max(1, Math.ceil(waitMs / 1000))
}

/** Sets `Retry-After` on the reply when the answer asks the client to come back (retryAfterSeconds). */
export function setRetryAfter(reply: FastifyReply, answer: ServiceError | { status: number }, defaultMs: number): void {
  const seconds = retryAfterSeconds(answer, defaultMs)
  if (seconds !== undefined) reply.header('retry-after', String(seconds))
}

/**
 * The one error handler and not-found handler of the service's routes, and a
 * `Retry-After` on every 429 and 503 answer of any route (OpenCode's
 * included) that does not set one itself.
 */
export function registerErrorHandling(app: FastifyInstance, options: { log: Logger; retryAfterMs: number }): void {
  const { log, retryAfterMs } = options
  app.setErrorHandler((err, request, reply) => sendError(reply, request, toHttpError(err), log, retryAfterMs))
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, new ServiceError('ROUTE_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`), log, retryAfterMs),
  )
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('retry-after')) setRetryAfter(reply, { status: reply.statusCode }, retryAfterMs)
    return payload
  })
}

/**
 * fastify's `frameworkErrors`: failures before routing (a URL whose
 * percent-encoding is broken) get `{code, message}` too, not fastify's body.
 */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const failure = new ServiceError('BAD_REQUEST', error.code === 'FST_ERR_BAD_URL' ? 'the URL is not valid (bad percent-encoding)' : error.message, {
    cause: error,
  })
  void reply.code(failure.status).type('application/json; charset=utf-8').send(failure.toBody())
}

/**
 * fastify's `clientErrorHandler`: a request Node's HTTP parser refused (headers over its size,
 * too slow, malformed) gets `{code, message}` too, not fastify's body; then the socket closes.
 */
export function clientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const failure =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ServiceError('HEADERS_TOO_LARGE', 'the request line and headers are larger than 16 KiB; send less in the URL and headers')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ServiceError('REQUEST_TIMEOUT', 'the request did not arrive in full in time')
        : new ServiceError('BAD_REQUEST', `the HTTP request could not be read (${error.code ?? error.message})`)
  const body = JSON.stringify(failure.toBody())
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/** Sends `{code, message}` with the code's status. */
export function sendError(reply: FastifyReply, request: FastifyRequest, error: ServiceError, log: Logger, retryAfterMs: number): FastifyReply {
  if (error.status >= 500 && error.status !== 503)
    log.error({ err: error.cause ?? error, method: request.method, route: request.routeOptions.url }, 'request failed')
  setRetryAfter(reply, error, retryAfterMs)
  // A refused WebSocket handshake: the socket is closed after this answer.
  if (request.ws) reply.header('connection', 'close')
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody())
}
