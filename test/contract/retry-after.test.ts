import { describe, expect, it } from 'vitest'
import { parseRetryAfter } from '../../contract/retry-after.ts'

describe('contract - Retry-After', () => {
  const now = Date.parse('2025-01-01T00:00:00Z')
  it.each([
    ['5', 5_000],
    [' 1 ', 1_000],
    [' 0 ', 0],
    [['2', '9'], 2_000],
    ['Wed, 01 Jan 2025 00:00:07 GMT', 7_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    ['', undefined],
    [null, undefined],
    [undefined, undefined],
  ] as const)('retry-after - %j is %s ms', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms)
  })
})
