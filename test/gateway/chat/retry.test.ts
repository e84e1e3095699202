import { describe, expect, it } from 'vitest'
import { isRetryableStatus, MAX_RETRY_DELAY_MS, retryDelayMs } from '../../../gateway/chat/retry.ts'

describe('chat retry', () => {
  it.each([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
  ])('retry - status %i retryable: %s', (status, retryable) => {
    expect(isRetryableStatus(status)).toBe(retryable)
  })

  it.each([
    { attempt: 1, base: 1000, after: undefined, ms: 1000 },
    { attempt: 2, base: 1000, after: undefined, ms: 2000 },
    { attempt: 3, base: 1000, after: undefined, ms: 4000 },
    { attempt: 10, base: 1000, after: undefined, ms: MAX_RETRY_DELAY_MS },
    { attempt: 1, base: 1000, after: 5000, ms: 5000 },
    { attempt: 3, base: 1000, after: 500, ms: 4000 },
    { attempt: 1, base: 1000, after: 3_600_000, ms: MAX_RETRY_DELAY_MS },
  ])('retry - delay after try $attempt (base $base, Retry-After $after) is $ms', ({ attempt, base, after, ms }) => {
    expect(retryDelayMs(attempt, base, after)).toBe(ms)
  })
})
