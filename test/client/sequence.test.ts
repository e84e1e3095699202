import { describe, expect, it } from 'vitest'
import { SequenceTracker } from '../../client/sequence.ts'

describe('sequence - each event once across a reconnection', () => {
  it('sequence - a replay that repeats delivered events passes only the new ones; unsequenced events always pass', () => {
    const tracker = new SequenceTracker()
    const arrivals: [string | undefined, number | undefined][] = [
      ['s', 1],
      ['s', 2],
      ['s', 3],
      ['s', 2],
      ['s', 3],
      ['s', 4],
      ['t', 1],
      ['s', undefined],
      [undefined, 9],
      ['s', 4],
    ]
    expect(arrivals.map(([session, seq]) => tracker.accept(session, seq))).toEqual([true, true, true, false, false, true, true, true, true, false])
    expect(tracker.last('s')).toBe(4)
    expect(tracker.last('t')).toBe(1)
    expect(tracker.last('u')).toBe(0)
  })

  it('sequence - skipTo starts a follower later, never earlier', () => {
    const tracker = new SequenceTracker()
    tracker.skipTo('s', 10)
    expect(tracker.accept('s', 10)).toBe(false)
    tracker.skipTo('s', 3)
    expect(tracker.last('s')).toBe(10)
    expect(tracker.accept('s', 11)).toBe(true)
  })
})
