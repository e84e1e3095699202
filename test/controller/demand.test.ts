import { afterEach, describe, expect, test } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { BusDemandSource, demandSubject } from '../../controller/demand.ts'
import { requestColdPod } from '../../gateway/cold-start.ts'
import type { DemandAnswer } from '../../controller/reconcile/view.ts'

let bus: MemoryBus | undefined
afterEach(async () => {
  await bus?.close()
  bus = undefined
})

describe('demand - over the bus', () => {
  test('the gateway asks, the serving controller answers; after stop nobody answers', async () => {
    bus = new MemoryBus()
    const asked: string[] = []
    const stop = new BusDemandSource(bus, 'pfx').serve(async (demand) => {
      asked.push(demand.session_id)
      return { ok: true, pod: 'pool-abcdefghij', created: true }
    })
    expect(await requestColdPod(bus, 'pfx', 's 1', 1_000)).toEqual({ ok: true, pod: 'pool-abcdefghij', created: true })
    expect(asked).toEqual(['s 1'])
    stop()
    expect(await requestColdPod(bus, 'pfx', 's2', 1_000)).toEqual({ ok: false, code: 'NOT_LEADER', message: 'no controller leads now' })
  })

  test('refusals and handler failures come back as answers', async () => {
    bus = new MemoryBus()
    const answers: DemandAnswer[] = [{ ok: false, code: 'POOL_EXHAUSTED', message: 'full' }]
    new BusDemandSource(bus, 'pfx').serve(async () => {
      const next = answers.shift()
      if (next === undefined) throw new Error('boom')
      return next
    })
    expect(await requestColdPod(bus, 'pfx', 's1', 1_000)).toEqual({ ok: false, code: 'POOL_EXHAUSTED', message: 'full' })
    expect(await requestColdPod(bus, 'pfx', 's1', 1_000)).toEqual({ ok: false, code: 'INTERNAL', message: 'boom' })
  })

  test('a malformed demand is refused without reaching the controller', async () => {
    bus = new MemoryBus()
    let called = false
    new BusDemandSource(bus, 'pfx').serve(async () => {
      called = true
      return { ok: true, pod: 'x', created: false }
    })
    const reply = await bus.request(demandSubject('pfx'), JSON.stringify({ session: 'no id' }), { timeoutMs: 1_000 })
    expect(JSON.parse(reply.data)).toMatchObject({ ok: false, code: 'INTERNAL' })
    expect(called).toBe(false)
  })
})
