import { ServiceError, type ErrorCode } from '../../contract/mod.ts'
import { toHttpError } from '../errors.ts'
import type { NamedError } from './schemas/session.ts'
import type { TaggedError } from './schemas/steering.ts'

/**
 * Errors at the OpenCode boundary: OpenCode's named shape
 * `{name, data: {message}}` (NotFoundError exactly as OpenCode writes it;
 * the others also carry the service's stable `code` in `data`).
 */

/** OpenCode's error names by service code; anything not listed is an UnknownError. */
const NAMES: Partial<Record<ErrorCode, string>> = {
  SESSION_NOT_FOUND: 'NotFoundError',
  BAD_JSON: 'BadRequest',
  BAD_REQUEST: 'BadRequest',
  UNKNOWN_TYPE: 'BadRequest',
  WORK_DIR_REJECTED: 'BadRequest',
  WORK_DIR_MISMATCH: 'ConflictError',
}

export function sessionNotFound(id: string): ServiceError {
  return new ServiceError('SESSION_NOT_FOUND', `Session not found: ${id}`)
}

/** The OpenCode body and HTTP status of a failure. */
export function toNamedError(err: unknown): { status: number; body: NamedError } {
  const error = toHttpError(err)
  const name = NAMES[error.code] ?? 'UnknownError'
  const data = error.code === 'SESSION_NOT_FOUND' ? { message: error.message } : { message: error.message, code: error.code }
  return { status: error.status, body: { name, data } }
}

/** Where a steering route failed: what it answers about, and on which API (the `/api` routes tag every error). */
export interface SteeringPlace {
  kind: 'permission' | 'question'
  api: 'v1' | 'v2'
  requestID?: string | undefined
  sessionID?: string | undefined
}

/**
 * The body and status of a failed steering route, in OpenCode 1.18's tagged
 * shapes: a request that does not wait (never asked, or settled already:
 * ALREADY_ANSWERED, which OpenCode does not tell apart, keeps its `code`) is
 * 404 `PermissionNotFoundError` / `QuestionNotFoundError`; an unknown session
 * 404 `SessionNotFoundError` on the `/api` routes (NotFoundError on the
 * others; on a route that names only the request, the request is what is not
 * found); a bad answer 400 `InvalidRequestError`. Anything else as toNamedError.
 */
export function toSteeringError(err: unknown, place: SteeringPlace): { status: number; body: NamedError | TaggedError } {
  const error = toHttpError(err)
  const { code } = error
  const { requestID, sessionID } = place
  const requestMissing = code === 'PERMISSION_NOT_FOUND' || code === 'ALREADY_ANSWERED' || (code === 'SESSION_NOT_FOUND' && sessionID === undefined)
  if (requestMissing && requestID !== undefined) {
    const noun = place.kind === 'permission' ? 'Permission' : 'Question'
    const message = code === 'ALREADY_ANSWERED' ? error.message : `${noun} request not found: ${requestID}`
    return { status: 404, body: { _tag: `${noun}NotFoundError`, requestID, message, ...(code === 'ALREADY_ANSWERED' && { code }) } }
  }
  if (code === 'SESSION_NOT_FOUND' && place.api === 'v2' && sessionID !== undefined) {
    return { status: 404, body: { _tag: 'SessionNotFoundError', sessionID, message: `Session not found: ${sessionID}` } }
  }
  if (code === 'BAD_REQUEST' || code === 'BAD_JSON') return { status: 400, body: { _tag: 'InvalidRequestError', message: error.message, code } }
  return toNamedError(err)
}
