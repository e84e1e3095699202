/**
 * Reading a `Retry-After` header (RFC 9110: delay-seconds or an HTTP date),
 * as the service sends it on 429 and 503 and the chat platform on its own
 * refusals. Shared by the typed client and the chat adapter. Pure.
 */

/** The header in ms from `now` (the first value when repeated); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | readonly string[] | null | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : (header as string | null | undefined))?.trim()
  if (value === undefined || value === '') return undefined
  if (/^\d+$/.test(value)) return Number(value) * 1000
  // An HTTP date ends in GMT; anything else Date.parse would still read (it takes "-1" for 2001).
  if (!/ GMT$/.test(value)) return undefined
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
