/** One contract for the state backends: what dev mode does in memory, JetStream does across processes. */
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { MemoryBus, NatsBus, type Bus } from '../../bus/mod.ts'
import { emptyStats, splitEvents, subjects, type ServiceEvent } from '../../contract/mod.ts'
import { openState, RegistryConflictError, StateConfigSchema, type SessionRecord, type State, type StateStore } from '../../state/mod.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'

const log = pino({ level: 'silent' })
let prefixSeq = 0

function record(sessionId: string, owner: string): SessionRecord {
  return { session_id: sessionId, owner, state: 'idle', cli_session_id: 'u', created_at: 1, last_active: 1, stats: emptyStats() }
}

function event(sessionId: string, seq: number): ServiceEvent & { session_id: string; seq: number } {
  return { event: 'answer', data: `part ${seq}`, session_id: sessionId, seq, ts: seq }
}

function stateContract(name: string, connect: () => Promise<{ bus: Bus; store: StateStore }>) {
  describe(`state (${name})`, () => {
    let bus: Bus
    let state: State
    const prefix = `state-${process.pid}-${prefixSeq++}`
    beforeAll(async () => {
      const connected = await connect()
      bus = connected.bus
      const settings = { ...StateConfigSchema.parse({ events_per_session: 50, storage: 'memory' }), prefix, durable_dir: './data/markers' }
      state = await openState(connected.store, settings, log)
    })
    afterAll(async () => {
      await state?.close()
      await bus?.close()
    })

    it('registry - list: none while empty, then every live record once and no deleted one', async () => {
      const { registry } = state
      expect(await registry.list()).toEqual([])
      for (let n = 0; n < 30; n++) await registry.create(record(`listed-${n}`, 'r1'))
      for (let n = 0; n < 30; n += 3) await registry.delete(`listed-${n}`)
      const listed = (await registry.list()).map((r) => r.session_id).sort()
      expect(listed).toEqual(
        Array.from({ length: 30 }, (_, n) => n)
          .filter((n) => n % 3 !== 0)
          .map((n) => `listed-${n}`)
          .sort(),
      )
      for (let n = 0; n < 30; n++) await registry.delete(`listed-${n}`)
      // Only delete markers left: still nothing, and the read ends.
      expect(await registry.list()).toEqual([])
    })

    it('registry - create is exclusive; update compares revisions', async () => {
      const { registry } = state
      const revision = await registry.create(record('a/b c', 'r1'))
      await expect(registry.create(record('a/b c', 'r2'))).rejects.toBeInstanceOf(RegistryConflictError)
      const read = await registry.get('a/b c')
      expect(read).toMatchObject({ value: { owner: 'r1' }, revision })
      const next = await registry.update({ ...read!.value, owner: 'r2' }, revision)
      await expect(registry.update({ ...read!.value, owner: 'r3' }, revision)).rejects.toBeInstanceOf(RegistryConflictError)
      expect((await registry.get('a/b c'))?.value.owner).toBe('r2')
      expect(next).toBeGreaterThan(revision)
      await registry.delete('a/b c')
      expect(await registry.get('a/b c')).toBeUndefined()
      // A deleted session can be created again.
      await registry.create(record('a/b c', 'r4'))
      expect((await registry.list()).map((r) => r.owner)).toContain('r4')
    })

    it('registry - watchers see puts and deletes', async () => {
      const changes: string[] = []
      const stop = await state.registry.watch((change) => changes.push(change.type === 'put' ? `put ${change.record.session_id}` : `delete`))
      await state.registry.create(record('watched', 'r1'))
      await state.registry.delete('watched')
      await vi.waitFor(() => expect(changes).toEqual(['put watched', 'delete']))
      stop()
    })

    it('documents - insert once, update in place, a deleted document stays deleted', async () => {
      const docs = await state.documents<{ id: string; title: string }>('contract-docs')
      expect(await docs.insert('a b', { id: 'a b', title: 'one' })).toEqual({ doc: { id: 'a b', title: 'one' }, created: true })
      expect(await docs.insert('a b', { id: 'a b', title: 'other' })).toEqual({ doc: { id: 'a b', title: 'one' }, created: false })
      expect(await docs.update('a b', { id: 'a b', title: 'two' })).toBe(true)
      expect(await docs.get('a b')).toEqual({ id: 'a b', title: 'two' })
      expect((await docs.list()).map((doc) => doc.title)).toContain('two')
      expect(await docs.delete('a b')).toBe(true)
      expect(await docs.update('a b', { id: 'a b', title: 'back?' })).toBe(false)
      expect(await docs.get('a b')).toBeUndefined()
      expect(await docs.delete('a b')).toBe(false)
    })

    it('leases - renew, read, list, release', async () => {
      const lease = { runner_id: 'runner-1', host: 'h', pid: 1, sessions: 2, max_sessions: 10, renewed_at: 5 }
      await state.leases.renew(lease)
      expect(await state.leases.get('runner-1')).toEqual(lease)
      expect((await state.leases.list()).map((l) => l.runner_id)).toContain('runner-1')
      await state.leases.release('runner-1')
      expect(await state.leases.get('runner-1')).toBeUndefined()
    })

    it('events - appended events are read back after a sequence, in order, and delivered live', async () => {
      const live: number[] = []
      const sub = bus.subscribe(subjects(prefix).events('ev-1'), (msg) => live.push(...splitEvents(msg.data).map((json) => JSON.parse(json).seq)))
      await bus.flush()
      for (let seq = 1; seq <= 30; seq++) state.events.append(event('ev-1', seq))
      await state.events.flush()
      expect(await state.events.lastSeq('ev-1')).toBe(30)
      expect(await state.events.lastSeq('nobody')).toBe(0)
      expect((await state.events.read('ev-1', 25)).map((e) => e.seq)).toEqual([26, 27, 28, 29, 30])
      expect(await state.events.read('ev-1', 30)).toEqual([])
      expect(await state.events.readStored('ev-1', 28)).toEqual([29, 30].map((seq) => ({ seq, json: JSON.stringify(event('ev-1', seq)) })))
      expect(await state.events.readStored('ev-1', 30)).toEqual([])
      expect(await state.events.read('nobody', 0)).toEqual([])
      await vi.waitFor(() => expect(live).toHaveLength(30))
      expect(live).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
      sub.unsubscribe()
    })

    it("events - an unnumbered event published last (the controller's SANDBOX_LOST) leaves the sequence and the replay as they were", async () => {
      for (let seq = 1; seq <= 3; seq++) state.events.append(event('ev-lost', seq))
      await state.events.flush()
      const lost: ServiceEvent = { event: 'error', session_id: 'ev-lost', ts: 4, data: 'gone', error: { code: 'SANDBOX_LOST', message: 'gone' } }
      bus.publish(subjects(prefix).events('ev-lost'), JSON.stringify(lost))
      await bus.flush()
      expect(await state.events.lastSeq('ev-lost')).toBe(3)
      expect((await state.events.read('ev-lost', 0)).map((e) => e.seq)).toEqual([1, 2, 3])
      expect((await state.events.read('ev-lost', 2)).map((e) => e.seq)).toEqual([3])
      expect((await state.events.readStored('ev-lost', 0)).map((e) => e.seq)).toEqual([1, 2, 3])
    })

    it('events - only the newest events_per_session are kept (appended one at a time: each its own message)', async () => {
      for (let seq = 1; seq <= 120; seq++) {
        state.events.append(event('ev-cap', seq))
        await new Promise((resolve) => setImmediate(resolve))
      }
      await state.events.flush()
      const kept = (await state.events.read('ev-cap', 0)).map((e) => e.seq)
      expect(kept.at(-1)).toBe(120)
      expect(kept.length).toBeGreaterThanOrEqual(50)
      expect(kept.length).toBeLessThanOrEqual(63)
      expect(kept).toEqual([...kept].sort((a, b) => a! - b!))
    })
  })
}

stateContract('memory', async () => {
  const bus = new MemoryBus()
  return { bus, store: { memory: bus } }
})

let nats: NatsFixture
beforeAll(async () => {
  nats = await startNats()
})
afterAll(async () => {
  await nats?.stop()
})
stateContract('jetstream', async () => {
  const bus = await NatsBus.connect(nats.url, { name: 'state-contract', logger: { warn: () => {} } })
  return { bus, store: { connection: bus.connection } }
})
