import pino from 'pino'
import { describe, expect, test } from 'vitest'
import { emptyStats } from '../../contract/stats.ts'
import { RegistrySessionEvents, registrySessionSource, withoutTurns } from '../../controller/registry-source.ts'
import { MemoryRegistry, type SessionRecord } from '../../state/mod.ts'

const record = (over: Partial<SessionRecord> & { session_id: string }): SessionRecord => ({
  state: 'idle',
  cli_session_id: 'c',
  created_at: 1,
  last_active: 2,
  stats: emptyStats(),
  ...over,
})
const silent = pino({ level: 'silent' })

describe('registry source - the session registry as the controller sees it', () => {
  test('lists sessions with owner, state and last activity; watch calls on every change until stopped', async () => {
    const registry = new MemoryRegistry()
    await registry.create(record({ session_id: 's1', owner: 'pool-abcdefghij', state: 'busy', last_active: 42 }))
    await registry.create(record({ session_id: 's2' }))
    const source = registrySessionSource(registry, silent)
    expect(await source.list()).toEqual([
      { session_id: 's1', owner: 'pool-abcdefghij', state: 'busy', last_active: 42 },
      { session_id: 's2', state: 'idle', last_active: 2 },
    ])
    let changes = 0
    const stop = source.watch(() => changes++)
    await new Promise((resolve) => setImmediate(resolve))
    expect(changes).toBe(1) // the watch's first list is in
    await registry.delete('s2')
    await registry.update(record({ session_id: 's1', state: 'idle', last_active: 50 }), (await registry.get('s1'))!.revision)
    expect(changes).toBe(3)
    // Served from the watch's cache now: the registry's answer, and the deleted record as closed.
    expect(await source.list()).toEqual([
      { session_id: 's1', state: 'idle', last_active: 50 },
      { session_id: 's2', state: 'closed', last_active: 2 },
    ])
    stop()
    await registry.delete('s1')
    expect(changes).toBe(3)
    expect(await source.list()).toEqual([])
  })

  test('a deleted record stays closed for 10 minutes (its pod goes at once), then it is forgotten; a new record of the id replaces it', async () => {
    const registry = new MemoryRegistry()
    await registry.create(record({ session_id: 's1', owner: 'pool-abcdefghij' }))
    await registry.create(record({ session_id: 's2', owner: 'pool-bbbbbbbbbb' }))
    let now = 1_000
    const source = registrySessionSource(registry, silent, () => now)
    const stop = source.watch(() => {})
    await new Promise((resolve) => setImmediate(resolve))
    await registry.delete('s1')
    await registry.delete('s2')
    expect(await source.list()).toEqual([
      { session_id: 's1', owner: 'pool-abcdefghij', state: 'closed', last_active: 2 },
      { session_id: 's2', owner: 'pool-bbbbbbbbbb', state: 'closed', last_active: 2 },
    ])
    await registry.create(record({ session_id: 's2', owner: 'pool-cccccccccc' }))
    expect((await source.list()).find((s) => s.session_id === 's2')).toEqual({ session_id: 's2', owner: 'pool-cccccccccc', state: 'idle', last_active: 2 })
    now += 10 * 60_000
    await registry.create(record({ session_id: 's3' }))
    expect((await source.list()).map((s) => s.session_id)).toEqual(['s2', 's3'])
    stop()
  })

  test('release clears the owner only while the dead pod still owns the session', async () => {
    const registry = new MemoryRegistry()
    await registry.create(record({ session_id: 's1', owner: 'pool-deaddeadde' }))
    await registry.create(record({ session_id: 's2', owner: 'pool-newnewnewn' }))
    const failed: string[] = []
    const events = new RegistrySessionEvents(registry, async (id, code) => {
      failed.push(`${id}:${code}`)
      return []
    })
    await events.release('s1', 'pool-deaddeadde')
    await events.release('s2', 'pool-deaddeadde')
    await events.release('missing', 'pool-deaddeadde')
    expect((await registry.get('s1'))!.value.owner).toBeUndefined()
    expect((await registry.get('s2'))!.value.owner).toBe('pool-newnewnewn')
    await events.fail('s1', 'SANDBOX_LOST', 'gone')
    expect(failed).toEqual(['s1:SANDBOX_LOST'])
  })

  test.each<[string, Partial<SessionRecord>, Partial<SessionRecord> | undefined]>([
    ['the running turn ended: idle, no turn', { state: 'busy', turn_id: 't1', turn_request_id: 7 }, { state: 'idle' }],
    ['the running and a waiting turn ended', { state: 'busy', turn_id: 't1', queued: [{ turn_id: 't2' }] }, { state: 'idle' }],
    ['another turn recorded since: it stays', { state: 'busy', turn_id: 't9', turn_request_id: 9 }, undefined],
    [
      'a waiting turn recorded since stays, the ended one goes',
      { state: 'busy', turn_id: 't1', queued: [{ turn_id: 't2' }, { turn_id: 't9' }] },
      { state: 'idle', queued: [{ turn_id: 't9' }] },
    ],
  ])('without turns - the turns the controller ended are forgotten: %s', (_name, fields, expected) => {
    const next = withoutTurns(record({ session_id: 's1', owner: 'pool-deaddeadde', ...fields }), [{ turn_id: 't1', request_id: 7 }, { turn_id: 't2' }])
    expect(next).toEqual(expected && record({ session_id: 's1', owner: 'pool-deaddeadde', ...expected }))
  })

  test('fail forgets the turns its events ended, so the next owner does not end them again', async () => {
    const registry = new MemoryRegistry()
    await registry.create(record({ session_id: 's1', owner: 'pool-deaddeadde', state: 'busy', turn_id: 't1', turn_request_id: 3 }))
    const events = new RegistrySessionEvents(registry, async () => [{ turn_id: 't1', request_id: 3 }])
    await events.fail('s1', 'SANDBOX_LOST', 'gone')
    expect((await registry.get('s1'))!.value).toEqual(record({ session_id: 's1', owner: 'pool-deaddeadde', state: 'idle' }))
  })
})
