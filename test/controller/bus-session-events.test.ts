import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { emptyStats, isTurnEnd, parseEvent, subjects, type ServiceEvent } from '../../contract/mod.ts'
import { publishSessionError } from '../../controller/bus-session-events.ts'
import { MemoryRegistry, type SessionRecord } from '../../state/mod.ts'

describe('controller session errors', () => {
  it.each([
    ['a running turn is ended by the error', { state: 'busy', turn_id: 't-7', turn_request_id: 3 }, [{ turn_id: 't-7', request_id: 3 }]],
    [
      'the turns waiting behind it are ended too, in order',
      { state: 'busy', turn_id: 't-7', queued: [{ turn_id: 't-8', request_id: 'b' }, { turn_id: 't-9' }] },
      [{ turn_id: 't-7' }, { turn_id: 't-8', request_id: 'b' }, { turn_id: 't-9' }],
    ],
    ['an idle session just hears of it', { state: 'idle' }, [{}]],
  ] as const)('error - %s', async (_name, fields, expected) => {
    const bus = new MemoryBus()
    const registry = new MemoryRegistry()
    const record: SessionRecord = {
      session_id: 's 1',
      cli_session_id: 'u',
      created_at: 1,
      last_active: 1,
      stats: emptyStats(),
      ...structuredClone(fields),
    } as SessionRecord
    await registry.create(record)
    const seen: ServiceEvent[] = []
    bus.subscribe(subjects('pfx').events('s 1'), (msg) => seen.push(parseEvent(msg.data)))
    await publishSessionError(bus, registry, 'pfx')('s 1', 'SANDBOX_LOST', 'the pod was evicted')
    await bus.flush()
    expect(seen.map((event) => ({ turn_id: event.turn_id, request_id: event.request_id }))).toEqual(
      expected.map((turn) => ({ turn_id: undefined, request_id: undefined, ...turn })),
    )
    for (const event of seen) {
      expect(event).toMatchObject({ event: 'error', session_id: 's 1', error: { code: 'SANDBOX_LOST', message: 'the pod was evicted' } })
      expect(event.seq).toBeUndefined()
      expect(isTurnEnd(event)).toBe(true)
    }
  })
})
