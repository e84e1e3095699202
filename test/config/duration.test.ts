import { describe, expect, it } from 'vitest'
import { parseDuration } from '../../config/duration.ts'

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1_500],
    ['0', 0],
  ])('duration - %s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })

  it.each(['5x', '', '5', 'm', '-1s', '1 m', '1m ', 'ms', '1d'])('duration - "%s" is rejected', (text) => {
    expect(parseDuration(text)).toBeUndefined()
  })
})
