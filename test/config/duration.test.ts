import { describe, expect, it } from 'vitest'
import { parseDuration } from '../../config/duration.ts'
import { DurationField } from '../../config/fields.ts'

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

describe('DurationField', () => {
  const Field = DurationField('5m')
  const Positive = DurationField('5m', { allowZero: false })

  it.each([
    ['"0"', '0', 0],
    ['a YAML number 0', 0, 0],
    ['a YAML number -0', -0, 0],
    ['"90s"', '90s', 90_000],
    ['absent', undefined, 300_000],
  ])('duration field - %s is accepted', (_, value, ms) => {
    expect(Field.parse(value)).toBe(ms)
  })

  it.each([
    ['a bare number other than 0', 5, /needs a unit, e\.g\. "5s" or "5ms"/],
    ['a bare fraction', 1.5, /needs a unit/],
    ['a negative number', -1, /needs a unit/],
    ['a string without a unit', '5', /invalid duration "5"/],
    ['a boolean', true, /expected/],
  ])('duration field - %s is refused with a message that says how to fix it', (_, value, message) => {
    const result = Field.safeParse(value)
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.message).toMatch(message)
  })

  it('duration field - 0 as a number is refused where off is not allowed, as "0" is', () => {
    expect(Positive.safeParse(0).success).toBe(false)
    expect(Positive.safeParse('0').success).toBe(false)
  })
})
