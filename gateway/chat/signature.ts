import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * The callback signature rule (spec §4.4): Base64 (standard alphabet) of
 * HMAC-SHA256, keyed with the callback token, of `timestamp + token + nonce`.
 * Pure: the clock comes in as `now`.
 */

/** The three values a signed callback carries. */
export interface SignedParams {
  signature?: string | undefined
  timestamp?: string | undefined
  nonce?: string | undefined
}

export type VerifyResult = { ok: true; timestampMs: number } | { ok: false; reason: 'missing' | 'bad_timestamp' | 'stale' | 'bad_signature' }

/** Timestamps with at most this many digits are seconds; longer ones milliseconds. */
const SECONDS_MAX_DIGITS = 10

/** The signature of one callback. */
export function sign(token: string, timestamp: string, nonce: string): string {
  return createHmac('sha256', token)
    .update(timestamp + token + nonce)
    .digest('base64')
}

/** Epoch milliseconds of a callback timestamp (decimal seconds or milliseconds), or undefined. */
export function timestampMs(timestamp: string): number | undefined {
  if (!/^\d{1,16}$/.test(timestamp)) return undefined
  const value = Number(timestamp)
  return timestamp.length <= SECONDS_MAX_DIGITS ? value * 1000 : value
}

/**
 * Checks a callback: all three values present, the timestamp within
 * `windowMs` of `now` (either way), the signature equal in constant time.
 */
export function verify(params: SignedParams, token: string, now: number, windowMs: number): VerifyResult {
  const { signature, timestamp, nonce } = params
  if (!signature || !timestamp || !nonce) return { ok: false, reason: 'missing' }
  const at = timestampMs(timestamp)
  if (at === undefined) return { ok: false, reason: 'bad_timestamp' }
  if (Math.abs(now - at) > windowMs) return { ok: false, reason: 'stale' }
  return safeEqual(sign(token, timestamp, nonce), signature) ? { ok: true, timestampMs: at } : { ok: false, reason: 'bad_signature' }
}

/** Constant-time equality; the length of a valid signature (44 characters) is public anyway. */
function safeEqual(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8')
  const b = Buffer.from(given, 'utf8')
  return a.length === b.length && timingSafeEqual(a, b)
}
