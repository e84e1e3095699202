import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { emptyStats, isTurnEnd, parseEvent, subjects, type ServiceEvent } from '../../contract/mod.ts'
import { publishSessionError } from '../../controller/bus-session-events.ts'
import { MemoryRegistry } from '../../state/mod.ts'

describe('controller session errors', () => {
  it.each([
    ['a running turn is ended by the error', 'busy', { turn_id: 't-7', request_id: 3 }],
    ['an idle session just hears of it', 'idle', {}],
  ] as const)('error - %s', async (_name, state, expected) => {
    const bus = new MemoryBus()
    const registry = new MemoryRegistry()
    await registry.create({ session_id: 's 1', state, turn_id: state === 'busy' ? 't-7' : undefined, turn_request_id: 3, cli_session_id: 'u', created_at: 1, last_active: 1, stats: emptyStats() } as never)
    const seen: ServiceEvent[] = []
    bus.subscribe(subjects('pfx').events('s 1'), (msg) => seen.push(parseEvent(msg.data)))
    await publishSessionError(bus, registry, 'pfx')('s 1', 'SANDBOX_LOST', 'the pod was evicted')
    await bus.flush()
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ event: 'error', session_id: 's 1', error: { code: 'SANDBOX_LOST', message: 'the pod was evicted' }, ...expected })
    expect(seen[0]!.seq).toBeUndefined()
    if (state === 'idle') expect(seen[0]!.turn_id).toBeUndefined()
    expect(isTurnEnd(seen[0]!)).toBe(true)
  })
})
