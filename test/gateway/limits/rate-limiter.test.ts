import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import { RateLimitedError, RateLimiter } from '../../../gateway/limits/rate-limiter.ts'
import { manualClock } from '../../fixtures/chat.ts'

describe('limits rate limiter - one bucket per key', () => {
  it('rate limiter - each key has its own bucket', () => {
    const clock = manualClock()
    const limiter = new RateLimiter({ rate: 1, burst: 2, now: clock.now })
    limiter.take('key:0')
    limiter.take('key:0')
    expect(() => limiter.take('key:0')).toThrow(RateLimitedError)
    expect(() => limiter.take('key:1')).not.toThrow()
    clock.advance(1_000)
    expect(() => limiter.take('key:0')).not.toThrow()
  })

  it('rate limiter - the refusal is RATE_LIMITED with the wait', () => {
    const clock = manualClock()
    const limiter = new RateLimiter({ rate: 4, burst: 1, now: clock.now })
    limiter.take('k')
    let error: unknown
    try {
      limiter.take('k')
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 250, status: 429 })
  })

  it('rate limiter - rate 0 is off', () => {
    const limiter = new RateLimiter({ rate: 0, burst: 1 })
    expect(limiter.enabled).toBe(false)
    for (let i = 0; i < 1_000; i++) limiter.take('k')
    expect(limiter.size).toBe(0)
  })

  it('rate limiter - many client addresses stay bounded, and an emptied bucket outlives full ones', () => {
    const clock = manualClock()
    const limiter = new RateLimiter({ rate: 1, burst: 1, now: clock.now, maxKeys: 100 })
    limiter.take('busy')
    for (let i = 0; i < 1_000; i++) limiter.take(`ip:${i}`)
    expect(limiter.size).toBeLessThanOrEqual(100)
    // `busy` emptied its bucket; evicting it would hand it a fresh burst.
    clock.advance(10)
    expect(() => limiter.take('busy')).toThrow(RateLimitedError)
  })
})
