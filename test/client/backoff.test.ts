import { describe, expect, it } from 'vitest'
import { retryDelayMs, type RetryPolicy } from '../../client/backoff.ts'

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
