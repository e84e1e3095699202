import { ServiceError, type ErrorCode } from '../../contract/mod.ts'
import { toHttpError } from '../errors.ts'
import type { NamedError } from './schemas/session.ts'

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
