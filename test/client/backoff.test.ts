import { describe, expect, it } from 'vitest'
import { parseRetryAfter, retryDelayMs, type RetryPolicy } from '../../client/backoff.ts'

const POLICY: RetryPolicy = { baseMs: 100, maxMs: 1_000, maxAttempts: 5 }

describe('backoff - retryDelayMs', () => {
  it.each([
    // attempt, retry-after, random, wait
    [1, undefined, 0, 50],
    [1, undefined, 0.999, 100],
    [2, undefined, 1, 200],
    [4, undefined, 1, 800],
    [6, undefined, 1, 1_000],
    [6, undefined, 0, 500],
    [1, 3_000, 1, 3_000],
    [4, 300, 1, 800],
  ])('backoff - try %i, Retry-After %s ms, jitter %s: waits %i ms', (attempt, retryAfter, random, wait) => {
    expect(retryDelayMs(attempt, POLICY, retryAfter, random)).toBe(Math.round(wait))
  })
})

describe('backoff - parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z')
  it.each([
    ['5', 5_000],
    [' 1 ', 1_000],
    [['2', '9'], 2_000],
    ['Wed, 01 Jan 2025 00:00:07 GMT', 7_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ] as const)('backoff - Retry-After %j is %s ms', (header, ms) => {
    expect(parseRetryAfter(header as string | string[] | undefined, now)).toBe(ms)
  })
})
