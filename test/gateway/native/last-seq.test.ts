import { describe, expect, it } from 'vitest'
import type { ServiceError } from '../../../contract/mod.ts'
import { parseLastSeq } from '../../../gateway/native/last-seq.ts'

function outcome(text: unknown): number | undefined | string {
  try {
    return parseLastSeq(text, 'last_seq')
  } catch (err) {
    return (err as ServiceError).code
  }
}

describe('last_seq - one rule for the URL, Last-Event-ID and the frames', () => {
  it.each([
    { text: undefined, expected: undefined },
    { text: '0', expected: 0 },
    { text: '41', expected: 41 },
    { text: '007', expected: 7 },
    { text: '999999999999999', expected: 999_999_999_999_999 },
    { text: '1000000000000000', expected: 'BAD_REQUEST' },
    { text: '', expected: 'BAD_REQUEST' },
    { text: '-1', expected: 'BAD_REQUEST' },
    { text: '1.5', expected: 'BAD_REQUEST' },
    { text: '1e3', expected: 'BAD_REQUEST' },
    { text: ' 1', expected: 'BAD_REQUEST' },
    { text: 'yesterday', expected: 'BAD_REQUEST' },
    { text: ['1', '2'], expected: 'BAD_REQUEST' },
  ])('$text → $expected', ({ text, expected }) => {
    expect(outcome(text)).toBe(expected)
  })

  it('last_seq - the refusal names what was wrong', () => {
    expect(() => parseLastSeq('x', 'Last-Event-ID (or last_seq)')).toThrow('Last-Event-ID (or last_seq) must be an event sequence number')
  })
})
