import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LeaseKeeper } from '../../runner/lease.ts'
import { MemoryLeases, type RunnerLease } from '../../state/mod.ts'

const TTL_MS = 1_000

/** Leases whose renewals answer as the test says: at once, after a delay, never, or with an error. */
class ScriptedLeases extends MemoryLeases {
  answer: 'ok' | 'fail' | 'never' | number = 'ok'
  override async renew(lease: RunnerLease): Promise<void> {
    const answer = this.answer
    if (answer === 'fail') throw new Error('renewal refused')
    if (answer === 'never') return new Promise(() => {})
    if (typeof answer === 'number') await new Promise((resolve) => setTimeout(resolve, answer))
    await super.renew(lease)
  }
}

describe('lease keeper', () => {
  let leases: ScriptedLeases
  let keeper: LeaseKeeper
  let lostAt: number | undefined
  let losses: number
  let renewals: number
  let started: number

  beforeEach(async () => {
    vi.useFakeTimers()
    leases = new ScriptedLeases()
    lostAt = undefined
    losses = 0
    renewals = 0
    keeper = new LeaseKeeper({
      leases,
      runnerId: 'r0',
      maxSessions: 1,
      ttlMs: TTL_MS,
      sessions: () => 0,
      onLost: () => {
        losses++
        lostAt ??= Date.now() - started
      },
      onRenewed: () => renewals++,
      log: pino({ level: 'silent' }),
    })
    await keeper.start()
    started = Date.now()
    renewals = 0
  })
  afterEach(async () => {
    await keeper.stop()
    vi.useRealTimers()
  })

  // Renewals run every TTL/3; the last good one was sent at 0 ms.
  it.each([
    ['renewals keep going through: no fence', 'ok', undefined],
    ['renewals are refused: fenced at 3/4 of the TTL', 'fail', 750],
    ['a renewal on its way answers late, before 9/10 of the TTL: no fence', 500, undefined],
    ['a renewal on its way never answers: fenced at 9/10 of the TTL, not before', 'never', 900],
    ['renewals answer after 6/5 of the TTL: fenced once, and answers that late do not count as renewals', 1_200, 900],
  ] as const)('lease - %s', async (_name, answer, fencedAt) => {
    leases.answer = answer
    await vi.advanceTimersByTimeAsync(TTL_MS * 3)
    expect(lostAt).toBe(fencedAt)
    expect(keeper.standing).toBe(fencedAt === undefined)
    if (fencedAt === undefined) expect(renewals).toBeGreaterThan(3)
    else expect(losses).toBe(1)
    // Past its own fence deadline a renewal leaves too little of the lease: the runner is not told it stands.
    if (answer === 1_200) expect(renewals).toBe(0)
  })

  it('lease - once a renewal goes through after a fence, the runner is told the lease stands again', async () => {
    leases.answer = 'never'
    await vi.advanceTimersByTimeAsync(TTL_MS)
    expect(lostAt).toBe(900)
    const before = renewals
    leases.answer = 'ok'
    await vi.advanceTimersByTimeAsync(TTL_MS)
    expect(renewals).toBeGreaterThan(before)
    expect(keeper.standing).toBe(true)
    expect(lostAt).toBe(900)
  })

  it('lease - a process thawed past its fence deadline: holds() fences at once, before the fence timer runs', () => {
    expect(keeper.holds()).toBe(true)
    // The clock jumps (the process was frozen); no timer has had a chance to run.
    vi.setSystemTime(Date.now() + TTL_MS)
    expect(keeper.holds()).toBe(false)
    expect(losses).toBe(1)
    expect(keeper.standing).toBe(false)
    // Asked again, and when the late timer fires: still one fence.
    expect(keeper.holds()).toBe(false)
    vi.runOnlyPendingTimers()
    expect(losses).toBe(1)
  })

  it('lease - thawed past its deadline with the renewal timer first: fenced before the renewal lands, then standing again', async () => {
    // The clock jumps; the renewal timer is the first thing to run, and its answer comes back at once.
    vi.setSystemTime(Date.now() + TTL_MS)
    await vi.advanceTimersToNextTimerAsync()
    expect(losses).toBe(1)
    expect(renewals).toBe(1)
    expect(keeper.standing).toBe(true)
  })

  it('lease - a stall past 3/4 of the TTL but short of 9/10: holds() renews at once, and that renewal saves the lease', async () => {
    // A stalled loop: the clock moves, no timer runs.
    vi.setSystemTime(Date.now() + TTL_MS * 0.8)
    expect(keeper.holds()).toBe(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(losses).toBe(0)
    expect(renewals).toBe(1)
    expect(keeper.standing).toBe(true)
  })

  it('lease - holds() within the fence deadline does not fence', () => {
    vi.setSystemTime(Date.now() + TTL_MS * 0.7)
    expect(keeper.holds()).toBe(true)
    expect(losses).toBe(0)
    expect(keeper.standing).toBe(true)
  })
})

describe('lease keeper of the only runner (dev mode)', () => {
  it('lease - never fences, however long renewals fail or the clock jumps', async () => {
    vi.useFakeTimers()
    const leases = new ScriptedLeases()
    let losses = 0
    const keeper = new LeaseKeeper({
      leases,
      runnerId: 'solo',
      maxSessions: 1,
      ttlMs: TTL_MS,
      sessions: () => 0,
      onLost: () => losses++,
      fences: false,
      log: pino({ level: 'silent' }),
    })
    try {
      await keeper.start()
      leases.answer = 'fail'
      await vi.advanceTimersByTimeAsync(TTL_MS * 5)
      vi.setSystemTime(Date.now() + TTL_MS * 10)
      expect(keeper.holds()).toBe(true)
      expect(losses).toBe(0)
      expect(keeper.standing).toBe(true)
    } finally {
      await keeper.stop()
      vi.useRealTimers()
    }
  })
})
