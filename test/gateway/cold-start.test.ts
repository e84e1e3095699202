import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { okReply, RUNNER_HEADER, subjects } from '../../contract/mod.ts'
import { RunnerClient } from '../../gateway/runner-client.ts'
import { MemoryRegistry } from '../../state/mod.ts'

const PREFIX = 'cold'
const execute = { type: 'execute', session_id: 'c1', turn_id: 't1', prompt: 'hi' } as const

describe('cold start through the controller', () => {
  it('cold start - with no runner free, the controller makes a pod and the command is placed when its runner joins', async () => {
    const bus = new MemoryBus()
    const s = subjects(PREFIX)
    const demands: string[] = []
    bus.subscribe(s.controllerDemand, (msg) => {
      demands.push(JSON.parse(msg.data).session_id)
      msg.respond(JSON.stringify({ ok: true, pod: 'pod-1', created: true }))
      // The pod's runner comes up a little later and joins the placement group.
      setTimeout(
        () =>
          bus.subscribe(s.place, (place) => place.respond(okReply('execute', { turn_id: 't1', queued: 0, after_seq: 0 }), { [RUNNER_HEADER]: 'pod-1' }), {
            queue: 'runners',
          }),
        300,
      )
    })
    const client = new RunnerClient(bus, PREFIX, 5_000, new MemoryRegistry())
    expect(await client.send(execute)).toEqual({ turn_id: 't1', queued: 0, after_seq: 0 })
    expect(demands).toEqual(['c1'])
  })

  it('cold start - a controller that cannot make a pod leaves the answer to placement: no runner at all is RUNNER_UNAVAILABLE', async () => {
    const bus = new MemoryBus()
    bus.subscribe(subjects(PREFIX).controllerDemand, (msg) => msg.respond(JSON.stringify({ ok: false, code: 'POOL_EXHAUSTED', message: 'full' })))
    const client = new RunnerClient(bus, PREFIX, 5_000, new MemoryRegistry())
    await expect(client.send(execute)).rejects.toMatchObject({ code: 'RUNNER_UNAVAILABLE' })
  })
})
