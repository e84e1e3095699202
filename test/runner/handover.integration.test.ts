import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { MemoryBus } from '../../bus/mod.ts'
import { isLiveOnly, type ServiceEvent } from '../../contract/mod.ts'
import { RunnerClient } from '../../gateway/runner-client.ts'
import { SessionHub } from '../../gateway/session-hub.ts'
import { runTurn } from '../../gateway/turns/follow.ts'
import type { State } from '../../state/mod.ts'
import { startRunnerStack, type RunnerStack } from '../fixtures/runner.ts'

/** Two runners on one bus and one state: a session released by one is taken by the other, and back. */
describe('session handover between runners', () => {
  const log = pino({ level: 'silent' })
  let stack: RunnerStack
  let bus: MemoryBus
  let state: State
  let client: RunnerClient
  let hub: SessionHub

  beforeAll(async () => {
    stack = await startRunnerStack({ overrides: { engine: { idle_timeout: '200ms' } }, runnerIds: ['r0', 'r1'] })
    const config = stack.config
    ;({ bus, state } = stack)
    client = new RunnerClient(bus, config.nats.prefix, 5_000, state.registry)
    hub = new SessionHub(bus, config.nats.prefix, log, state.events)
  })
  afterAll(async () => {
    await stack.close()
  })

  it('handover - the session moves between runners; its sequence never repeats and the conversation goes on', async () => {
    const seen: ServiceEvent[] = []
    const detach = hub.attach('moving', (event) => seen.push(event))
    const owners: string[] = []
    // A → B → A → B: the registry names the next owner (as a claim by that runner would).
    for (const [prompt, next] of [
      ['one', 'r0'],
      ['two', 'r1'],
      ['three', 'r0'],
      ['four', 'r1'],
    ] as const) {
      const released = await state.registry.get('moving')
      if (released) await state.registry.update({ ...released.value, owner: next }, released.revision)
      const outcome = await runTurn({ runners: client, hub }, { session_id: 'moving', prompt })
      expect(outcome.end).toBe('completed')
      owners.push((await state.registry.get('moving'))!.value.owner!)
      // The idle reaper ends the CLI and hands the session back to the pool.
      await vi.waitFor(async () => expect((await state.registry.get('moving'))!.value.owner).toBeUndefined(), { timeout: 5_000 })
    }
    const recall = await runTurn({ runners: client, hub }, { session_id: 'moving', prompt: 'recall' })
    detach()
    expect(owners.slice(1)).toEqual(['r1', 'r0', 'r1'])
    expect(recall.answer).toBe('Earlier prompts: one | two | three | four')
    // Every turn's events arrived: a runner that reused sequence numbers would have had them dropped as repeats.
    expect(seen.filter((event) => event.event === 'turn_started').map((event) => event.data)).toEqual(['one', 'two', 'three', 'four', 'recall'])
    expect(seen.filter((event) => event.event === 'answer').map((event) => event.data)).toEqual([
      'Echo: one',
      'Echo: two',
      'Echo: three',
      'Echo: four',
      recall.answer,
    ])
    // Token deltas are live only: no sequence, not stored.
    const seqs = seen.filter((event) => !isLiveOnly(event)).map((event) => event.seq)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1))
    const stored = (await state.events.read('moving', 0)).map((event) => event.seq)
    expect(stored).toEqual(seqs)
  })
})
