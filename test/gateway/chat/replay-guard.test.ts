import { describe, expect, it } from 'vitest'
import { ReplayGuard } from '../../../gateway/chat/replay-guard.ts'

const WINDOW = 60_000

describe('chat replay guard', () => {
  it('replay guard - the second sight of a signature is a replay', () => {
    const guard = new ReplayGuard(WINDOW)
    expect(guard.firstSeen('sig-a', 1000, 1000)).toBe(true)
    expect(guard.firstSeen('sig-a', 1000, 2000)).toBe(false)
    expect(guard.firstSeen('sig-b', 1000, 2000)).toBe(true)
  })

  it('replay guard - entries are forgotten once their timestamp leaves the window', () => {
    const guard = new ReplayGuard(WINDOW)
    guard.firstSeen('sig-a', 1000, 1000)
    guard.firstSeen('sig-b', 50_000, 50_000)
    expect(guard.firstSeen('sig-c', 1000 + WINDOW + 1, 1000 + WINDOW + 1)).toBe(true)
    expect(guard.size).toBe(2)
  })

  it('replay guard - the table is bounded, the oldest entry goes first', () => {
    const guard = new ReplayGuard(WINDOW, 3)
    for (const sig of ['a', 'b', 'c', 'd']) guard.firstSeen(sig, 1000, 1000)
    expect(guard.size).toBe(3)
    expect(guard.firstSeen('d', 1000, 1000)).toBe(false)
    expect(guard.firstSeen('a', 1000, 1000)).toBe(true)
  })
})
