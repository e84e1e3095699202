import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../../bus/mod.ts'
import { subjects, type ServiceEvent } from '../../../contract/mod.ts'
import { stamp, stampLive } from '../../../runner/event-draft.ts'
import type { RunnerObserver } from '../../../runner/observer.ts'
import { EventSink } from '../../../runner/ownership/event-sink.ts'
import { MemoryEventLog } from '../../../state/mod.ts'

function harness() {
  const bus = new MemoryBus()
  const log = new MemoryEventLog(bus, 'ar', 100)
  const observed: ServiceEvent[] = []
  const observer: RunnerObserver = { command: () => {}, commandFailed: () => {}, event: (event) => void observed.push(event), dangerBlocked: () => {} }
  const live: string[] = []
  bus.subscribe(subjects('ar').live('s'), (msg) => void live.push(msg.data))
  return { bus, log, observed, live, sink: new EventSink({ events: log, bus, subjects: subjects('ar'), observer }) }
}

describe('event sink - where a session event goes', () => {
  it('event sink - a numbered event is stored in the event log and reported to the observer', async () => {
    const { log, observed, live, sink } = harness()
    const event = stamp({ event: 'turn_started', turn_id: 't', data: 'hi' }, 's', 1, 5)
    sink.append(event, () => true)
    expect(observed).toEqual([event])
    expect((await log.read('s', 0)).map((stored) => stored.seq)).toEqual([1])
    expect(live).toEqual([])
  })

  it('event sink - a live-only event goes on the live subject, neither stored nor reported', async () => {
    const { bus, log, observed, live, sink } = harness()
    const delta = stampLive({ event: 'answer_delta', turn_id: 't', data: 'h' }, 's', 5)
    sink.live(delta)
    await bus.flush()
    expect(live.map((text) => JSON.parse(text))).toEqual([delta])
    expect(observed).toEqual([])
    expect(await log.read('s', 0)).toEqual([])
  })
})
