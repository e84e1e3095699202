import { describe, expect, it } from 'vitest'
import { TokenBucket } from '../../../gateway/limits/token-bucket.ts'

describe('limits token bucket - burst, then the rate', () => {
  it('token bucket - a burst passes at once, the next waits one refill', () => {
    const bucket = new TokenBucket(2, 3, 0) // 2/s, burst 3
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([0, 0, 0])
    expect(bucket.take(0)).toBe(500)
    expect(bucket.take(250)).toBe(250)
    expect(bucket.take(500)).toBe(0)
    expect(bucket.take(500)).toBe(500)
  })

  it('token bucket - refills up to the burst, never beyond', () => {
    const bucket = new TokenBucket(10, 2, 0)
    bucket.take(0)
    bucket.take(0)
    expect(bucket.full(10_000)).toBe(true)
    expect([bucket.take(10_000), bucket.take(10_000)]).toEqual([0, 0])
    expect(bucket.take(10_000)).toBe(100)
  })

  it('token bucket - a clock that goes back gives no tokens and takes none', () => {
    const bucket = new TokenBucket(1, 1, 1_000)
    expect(bucket.take(1_000)).toBe(0)
    expect(bucket.take(0)).toBe(1_000)
    expect(bucket.take(2_000)).toBe(0)
  })

  it('token bucket - a fractional rate waits the whole interval', () => {
    const bucket = new TokenBucket(0.5, 1, 0)
    bucket.take(0)
    expect(bucket.take(0)).toBe(2_000)
  })
})
