import path from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { MemoryBus } from '../../bus/mod.ts'
import type { Config } from '../../service/config/mod.ts'
import { emptyStats, isLiveOnly, type ServiceEvent } from '../../contract/mod.ts'
import { RunnerClient } from '../../gateway/runner-client.ts'
import { SessionHub } from '../../gateway/session-hub.ts'
import type { RunnerLease, RunnerLeases, State } from '../../state/mod.ts'
import { processesUnder } from '../fixtures/processes.ts'
import { startRunnerStack, type RunnerStack } from '../fixtures/runner.ts'

/** Leases whose renewals can be made to fail, as when NATS is cut off or too slow to answer. */
class FlakyLeases implements RunnerLeases {
  failing = false
  readonly #inner: RunnerLeases
  constructor(inner: RunnerLeases) {
    this.#inner = inner
  }
  async renew(lease: RunnerLease): Promise<void> {
    if (this.failing) throw new Error('renewal refused by the test')
    await this.#inner.renew(lease)
  }
  get = (runnerId: string) => this.#inner.get(runnerId)
  list = () => this.#inner.list()
  release = (runnerId: string) => this.#inner.release(runnerId)
}

/**
 * Turns whose runner went away must still end for their clients. A runner
 * that cannot renew its lease fences itself (ends its sessions' processes
 * before another runner may take them) and, once the lease stands again, ends
 * the turns the fence cut short. A runner that takes over from a dead one
 * ends the turns the record names: the running one and those waiting.
 */
describe('lost turns', () => {
  const log = pino({ level: 'silent' })
  const LEASE_TTL_MS = 600
  let runners: RunnerStack
  let config: Config
  let bus: MemoryBus
  let state: State
  let leases: FlakyLeases
  let client: RunnerClient
  let hub: SessionHub

  beforeEach(async () => {
    runners = await startRunnerStack({
      overrides: { engine: { stop_grace: '200ms' } },
      state: (opened) => {
        leases = new FlakyLeases(opened.leases!)
        return { ...opened, leases }
      },
      leaseTtlMs: LEASE_TTL_MS,
    })
    ;({ config, bus, state } = runners)
    client = new RunnerClient(bus, config.nats.prefix, 5_000, state.registry, leases)
    hub = new SessionHub(bus, config.nats.prefix, log, state.events)
  })
  afterEach(async () => {
    await runners.close()
  })

  async function fenceWhile(during: () => Promise<void>): Promise<void> {
    leases.failing = true
    await during()
    leases.failing = false
  }

  it('fence - the running and the queued turn end with RUNNER_LOST once the lease stands again; the session goes on', async () => {
    const seen: ServiceEvent[] = []
    const detach = hub.attach('fenced', (event) => seen.push(event))
    await client.send({ type: 'execute', session_id: 'fenced', turn_id: 't1', prompt: 'sleep: 60', request_id: 'a' })
    await client.send({ type: 'execute', session_id: 'fenced', turn_id: 't2', prompt: 'queued behind', request_id: 'b' })
    await vi.waitFor(() => expect(seen.map((event) => event.event)).toContain('tool_use'), { timeout: 10_000 })
    const sandbox = path.join(config.session.work_dir, 'fenced')

    await fenceWhile(async () => {
      // Fenced: the session's processes end although nothing told it to stop.
      await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 10_000 })
      // And it claims nothing until its lease stands again.
      await expect(client.send({ type: 'execute', session_id: 'newcomer', turn_id: 'n1', prompt: 'hello' })).rejects.toMatchObject({
        code: 'RUNNER_UNAVAILABLE',
      })
    })
    const ends = await vi.waitFor(
      () => {
        const errors = seen.filter((event) => event.event === 'error')
        expect(errors).toHaveLength(2)
        return errors
      },
      { timeout: 10_000 },
    )
    expect(ends.map((event) => [event.turn_id, event.request_id, event.event === 'error' && event.error.code])).toEqual([
      ['t1', 'a', 'RUNNER_LOST'],
      ['t2', 'b', 'RUNNER_LOST'],
    ])
    expect((await state.registry.get('fenced'))!.value).toMatchObject({ owner: 'r0', state: 'idle' })

    await client.send({ type: 'execute', session_id: 'fenced', turn_id: 't3', prompt: 'after the fence' })
    await vi.waitFor(() => expect(seen.at(-1)).toMatchObject({ event: 'completed', turn_id: 't3' }), { timeout: 10_000 })
    detach()
    // Token deltas are live only: no sequence.
    const seqs = seen.filter((event) => !isLiveOnly(event)).map((event) => event.seq)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1))
  })

  it('fence - a session another runner took over meanwhile is left to it: the fenced runner says nothing more about it', async () => {
    const seen: ServiceEvent[] = []
    const detach = hub.attach('taken', (event) => seen.push(event))
    await client.send({ type: 'execute', session_id: 'taken', turn_id: 't1', prompt: 'sleep: 60' })
    await vi.waitFor(() => expect(seen.map((event) => event.event)).toContain('tool_use'), { timeout: 10_000 })
    const sandbox = path.join(config.session.work_dir, 'taken')

    await fenceWhile(async () => {
      await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 10_000 })
      const record = (await state.registry.get('taken'))!
      await state.registry.update({ ...record.value, owner: 'r1' }, record.revision)
    })
    const before = seen.length
    // Several renewals go through: the fenced runner would have taken the session back by now.
    await new Promise((resolve) => setTimeout(resolve, LEASE_TTL_MS * 2))
    detach()
    expect(seen.slice(before)).toEqual([])
    expect((await state.registry.get('taken'))!.value.owner).toBe('r1')
  })

  it('takeover - from a dead owner: its running turn and the turns waiting behind it end with RUNNER_LOST, in order', async () => {
    await state.registry.create({
      session_id: 'orphan',
      owner: 'gone',
      state: 'busy',
      turn_id: 't1',
      turn_request_id: 'a',
      queued: [{ turn_id: 't2', request_id: 'b' }, { turn_id: 't3' }],
      cli_session_id: 'u',
      created_at: 1,
      last_active: 1,
      stats: emptyStats(),
    })
    const seen: ServiceEvent[] = []
    const detach = hub.attach('orphan', (event) => seen.push(event), { afterSeq: 0 })
    expect(await client.send({ type: 'recover', session_id: 'orphan' })).toEqual({ recovered: true })
    await vi.waitFor(() => expect(seen).toHaveLength(3))
    detach()
    expect(seen.map((event) => [event.seq, event.turn_id, event.request_id, event.event === 'error' && event.error.code])).toEqual([
      [1, 't1', 'a', 'RUNNER_LOST'],
      [2, 't2', 'b', 'RUNNER_LOST'],
      [3, 't3', undefined, 'RUNNER_LOST'],
    ])
    await vi.waitFor(async () => expect((await state.registry.get('orphan'))!.value).toMatchObject({ owner: 'r0', state: 'idle', stats: { errors: 3 } }))
    expect((await state.registry.get('orphan'))!.value.queued).toBeUndefined()
  })

  it('record - the turns waiting behind the running one are in the registry while they wait', async () => {
    const seen: ServiceEvent[] = []
    const detach = hub.attach('waiting', (event) => seen.push(event))
    await client.send({ type: 'execute', session_id: 'waiting', turn_id: 't1', prompt: 'sleep: 60' })
    await client.send({ type: 'execute', session_id: 'waiting', turn_id: 't2', prompt: 'next', request_id: 7 })
    await vi.waitFor(async () =>
      expect((await state.registry.get('waiting'))!.value).toMatchObject({ state: 'busy', turn_id: 't1', queued: [{ turn_id: 't2', request_id: 7 }] }),
    )
    await client.send({ type: 'stop', session_id: 'waiting' })
    await vi.waitFor(async () => expect((await state.registry.get('waiting'))!.value.state).toBe('idle'))
    detach()
    expect((await state.registry.get('waiting'))!.value.queued).toBeUndefined()
    expect(seen.filter((event) => event.event === 'stopped').map((event) => event.turn_id)).toEqual(['t2', 't1'])
  })
})
