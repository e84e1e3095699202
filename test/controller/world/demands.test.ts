import { describe, expect, test } from 'vitest'
import type { DemandAnswer } from '../../../controller/reconcile/view.ts'
import { DEMAND_TTL_MS, PendingDemands } from '../../../controller/world/demands.ts'

const T0 = 1_000_000
const OK: DemandAnswer = { ok: true, pod: 'p1', created: true }
const EXPIRED: DemandAnswer = { ok: false, code: 'INTERNAL', message: 'no pod could be made in time' }

/** Lets pending promise callbacks run. */
const tick = () => new Promise((resolve) => setImmediate(resolve))

function record(demands: PendingDemands, sessionId: string, now: number) {
  const got: DemandAnswer[] = []
  void demands.wait(sessionId, now).then((answer) => got.push(answer))
  return got
}

describe('pending demands', () => {
  test('pending demands - every waiter of a session gets the one answer; the session waits no more', async () => {
    const demands = new PendingDemands()
    const first = record(demands, 's1', T0)
    const second = record(demands, 's1', T0 + 10)
    const other = record(demands, 's2', T0)
    expect(demands.sessions()).toEqual(['s1', 's2'])
    demands.answer('s1', OK)
    await tick()
    expect([first, second, other]).toEqual([[OK], [OK], []])
    expect(demands.sessions()).toEqual(['s2'])
  })

  test('pending demands - an answer for a session nobody waits for is dropped', () => {
    const demands = new PendingDemands()
    demands.answer('s1', OK)
    expect(demands.sessions()).toEqual([])
  })

  const expiry: { name: string; asked: number[]; now: number; expired: boolean }[] = [
    { name: 'a demand younger than DEMAND_TTL_MS waits on', asked: [T0], now: T0 + DEMAND_TTL_MS - 1, expired: false },
    { name: 'a demand DEMAND_TTL_MS old is answered INTERNAL', asked: [T0], now: T0 + DEMAND_TTL_MS, expired: true },
    { name: 'asking again does not restart the wait', asked: [T0, T0 + DEMAND_TTL_MS - 1], now: T0 + DEMAND_TTL_MS, expired: true },
  ]
  test.each(expiry)('pending demands - $name', async ({ asked, now, expired }) => {
    const demands = new PendingDemands()
    const waiters = asked.map((at) => record(demands, 's1', at))
    demands.expire(now)
    await tick()
    expect(waiters).toEqual(asked.map(() => (expired ? [EXPIRED] : [])))
    expect(demands.sessions()).toEqual(expired ? [] : ['s1'])
  })

  test('pending demands - answerAll answers every session alike (leadership moved)', async () => {
    const demands = new PendingDemands()
    const a = record(demands, 's1', T0)
    const b = record(demands, 's2', T0)
    const moved: DemandAnswer = { ok: false, code: 'NOT_LEADER', message: 'leadership moved; ask again' }
    demands.answerAll(moved)
    await tick()
    expect([a, b]).toEqual([[moved], [moved]])
    expect(demands.sessions()).toEqual([])
  })
})
