import type { ErrorCode } from '../contract/errors.ts'

/** When and how long the client waits before trying again. Pure. */

/** Codes that say "not now": the request was not carried out and may be sent again later. */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['OVERLOADED', 'RATE_LIMITED', 'SHUTTING_DOWN'])

/** Codes after which trying again cannot help (a wrong key, a page on an origin the service refuses). */
export const FATAL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['UNAUTHORIZED', 'FORBIDDEN_ORIGIN'])

export interface RetryPolicy {
  /** The first wait; doubled after each failed try. */
  baseMs: number
  /** The longest wait the doubling reaches (a longer Retry-After still wins). */
  maxMs: number
  /** Tries in a row before giving up (a connection, or a request refused with a retryable code). */
  maxAttempts: number
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 250, maxMs: 30_000, maxAttempts: 10 }

/**
 * The wait after failed try `attempt` (1-based): the doubling of `baseMs` up
 * to `maxMs`, jittered down by at most half (`random` in [0, 1)) so that many
 * clients refused at once do not come back at once, and never shorter than
 * the server's Retry-After.
 */
export function retryDelayMs(attempt: number, policy: RetryPolicy, retryAfterMs?: number, random: number = Math.random()): number {
  const doubled = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1))
  const jittered = Math.round(doubled / 2 + (doubled / 2) * random)
  return Math.max(jittered, retryAfterMs ?? 0)
}
