/** When and how long to wait before trying an outbound call again. Pure. */

/** Longest wait between two tries. */
export const MAX_RETRY_DELAY_MS = 30_000

/** Statuses worth another try: rate limited or a server-side failure. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500
}

/**
 * The wait after failed try number `attempt` (1-based): `baseMs` doubled per
 * try, at most MAX_RETRY_DELAY_MS, but never shorter than a Retry-After the
 * server asked for (itself capped).
 */
export function retryDelayMs(attempt: number, baseMs: number, retryAfterMs?: number): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** (attempt - 1))
  return Math.max(exponential, Math.min(MAX_RETRY_DELAY_MS, retryAfterMs ?? 0))
}
