import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { ServiceEvent } from '../../../contract/mod.ts'
import { sequentialIds } from '../../../gateway/opencode/ids.ts'
import { makePlan, type MapContext } from '../../../gateway/opencode/mapping/state.ts'
import { MessageStore } from '../../../gateway/opencode/message-store.ts'
import type { OpencodeEvent } from '../../../gateway/opencode/schemas/event.ts'
import type { EventListener } from '../../../gateway/session-hub.ts'
import { nativeTurn } from './native-events.ts'

/** A hub stand-in: delivers what the test pushes to the session's listeners. */
class FakeEvents {
  readonly listeners = new Map<string, Set<EventListener>>()
  attach(sessionId: string, listener: EventListener): () => void {
    const set = this.listeners.get(sessionId) ?? new Set()
    set.add(listener)
    this.listeners.set(sessionId, set)
    return () => set.delete(listener)
  }
  push(sessionId: string, event: ServiceEvent): void {
    for (const listener of this.listeners.get(sessionId) ?? []) listener(event, JSON.stringify(event))
  }
}

function setup() {
  const events = new FakeEvents()
  const published: { event: OpencodeEvent; directory: string }[] = []
  const ctx: MapContext = { id: sequentialIds(), now: () => 1, defaults: { agent: 'build', model: { providerID: 'p', modelID: 'm' } } }
  const store = new MessageStore({ events, ctx, publish: (event, directory) => published.push({ event, directory }), log: pino({ level: 'silent' }) })
  return { events, published, ctx, store }
}

describe('message store - native events in, OpenCode events out, turns awaited', () => {
  it('open follows the session once; events are published with its directory; a planned turn resolves with its message', async () => {
    const { events, published, ctx, store } = setup()
    store.open('s1', '/dir/s1')
    store.open('s1', '/dir/s1')
    expect(events.listeners.get('s1')?.size).toBe(1)
    const ended = store.plan('s1', makePlan(ctx, 'turn_1'))
    expect(store.status('s1')).toBe('busy')
    const t = nativeTurn('s1', 'turn_1')
    for (const event of [t.started('hi'), t.answer('Echo: hi'), t.completed()]) events.push('s1', event)
    const end = await ended
    expect(end).toMatchObject({ turnId: 'turn_1', end: 'completed', message: { info: { role: 'assistant' } } })
    expect(end.message!.parts.map((p) => p.type)).toEqual(['step-start', 'text', 'step-finish'])
    expect(store.status('s1')).toBe('idle')
    expect(store.messages('s1').map((m) => m.info.role)).toEqual(['user', 'assistant'])
    expect(published.every((p) => p.directory === '/dir/s1')).toBe(true)
    expect(published.at(-1)!.event.type).toBe('session.idle')
  })

  it('drop hands the error to whoever waits and makes the session idle', async () => {
    const { ctx, store } = setup()
    store.open('s1', '/d')
    const ended = store.plan('s1', makePlan(ctx, 'turn_1'))
    store.drop('s1', 'turn_1', { code: 'RUNNER_UNAVAILABLE', message: 'no runner' })
    expect(await ended).toEqual({ turnId: 'turn_1', end: 'error', error: { code: 'RUNNER_UNAVAILABLE', message: 'no runner' } })
    expect(store.status('s1')).toBe('idle')
  })

  it('close detaches, forgets the messages and ends the waits as stopped', async () => {
    const { events, ctx, store } = setup()
    store.open('s1', '/d')
    const ended = store.plan('s1', makePlan(ctx, 'turn_1'))
    store.close('s1')
    expect(await ended).toEqual({ turnId: 'turn_1', end: 'stopped' })
    expect(events.listeners.get('s1')?.size).toBe(0)
    expect(store.has('s1')).toBe(false)
    expect(store.messages('s1')).toEqual([])
  })

  it('events of other sessions and of a closed session change nothing', () => {
    const { events, published, store } = setup()
    store.open('s1', '/d')
    const t = nativeTurn('s2', 'turn_x')
    events.push('s2', t.started('other'))
    expect(published).toEqual([])
    expect(store.messages('s1')).toEqual([])
  })
})
