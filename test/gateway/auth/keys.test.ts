import { describe, expect, it } from 'vitest'
import { ApiKeys } from '../../../gateway/auth/keys.ts'

describe('auth keys - constant-time matching', () => {
  it('keys - finds the configured key whichever it is, and nothing else', () => {
    const keys = new ApiKeys(['old-key-0123456789', 'new-key-abcdefghij'])
    expect(keys.enabled).toBe(true)
    expect(keys.match('old-key-0123456789')).toBe(0)
    expect(keys.match('new-key-abcdefghij')).toBe(1)
    for (const wrong of ['', 'old-key-012345678', 'old-key-01234567890', 'OLD-KEY-0123456789', 'new-key-abcdefghij ', '\u0000']) {
      expect(keys.match(wrong)).toBe(-1)
    }
  })

  it('keys - none configured means disabled and nothing matches', () => {
    const keys = new ApiKeys([])
    expect(keys.enabled).toBe(false)
    expect(keys.match('')).toBe(-1)
  })

  it('keys - duplicates count once', () => {
    expect(new ApiKeys(['k1', 'k1', 'k2']).size).toBe(2)
  })

  it('keys - compares digests of one fixed length, so any presented length is safe', () => {
    const keys = new ApiKeys(['short'])
    // timingSafeEqual throws on different lengths; digests never differ in length.
    expect(() => keys.match('x'.repeat(100_000))).not.toThrow()
    expect(keys.match('x'.repeat(100_000))).toBe(-1)
  })
})
