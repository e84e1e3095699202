import { describe, expect, it } from 'vitest'
import { frameAdmission, frameBytes } from '../../../gateway/limits/frame-admission.ts'
import { RateLimiter } from '../../../gateway/limits/rate-limiter.ts'
import { hardFrameLimit, LimitsConfigSchema } from '../../../gateway/limits/config.ts'
import { manualClock } from '../../fixtures/chat.ts'

describe('limits frames - size and rate of WebSocket frames', () => {
  it('frames - over max_frame is PAYLOAD_TOO_LARGE, at it is read', () => {
    const admit = frameAdmission({ maxFrame: 100, limiter: new RateLimiter({ rate: 0, burst: 1 }), key: 'k' })
    expect(admit(100)).toBeUndefined()
    expect(admit(101)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('limits.max_frame') })
  })

  it("frames - every frame takes from the key's bucket", () => {
    const clock = manualClock()
    const admit = frameAdmission({ maxFrame: 100, limiter: new RateLimiter({ rate: 1, burst: 2, now: clock.now }), key: 'k' })
    expect([admit(1), admit(1)]).toEqual([undefined, undefined])
    expect(admit(1)).toMatchObject({ code: 'RATE_LIMITED' })
    clock.advance(1_000)
    expect(admit(1)).toBeUndefined()
  })

  it('frames - byte length of every shape ws delivers', () => {
    expect(frameBytes(Buffer.from('héllo'))).toBe(6)
    expect(frameBytes(new ArrayBuffer(7))).toBe(7)
    expect(frameBytes([Buffer.alloc(3), Buffer.alloc(4)])).toBe(7)
  })

  it('frames - the hard cap of ws is well above max_frame', () => {
    expect(hardFrameLimit(1024 * 1024)).toBe(4 * 1024 * 1024)
    expect(hardFrameLimit(1000)).toBe(1000 + 64 * 1024)
  })

  it('limits config - sizes take units, durations and defaults', () => {
    const limits = LimitsConfigSchema.parse({ max_body: '512KiB', max_frame: 2048 })
    expect(limits).toMatchObject({ max_body: 512 * 1024, max_frame: 2048, max_active_sessions: 0, rate: 0, burst: 50, retry_after: 5_000 })
    expect(LimitsConfigSchema.safeParse({ max_body: '1 TB' }).success).toBe(false)
    expect(LimitsConfigSchema.safeParse({ max_frame: 0 }).success).toBe(false)
    expect(LimitsConfigSchema.safeParse({ max_frame: '2MB' }).data?.max_frame).toBe(2_000_000)
  })
})
