import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { subjects, type ServiceEvent } from '../../contract/mod.ts'
import { SessionHub } from '../../gateway/session-hub.ts'
import type { EventLog, StoredEvent } from '../../state/mod.ts'

const PREFIX = 'hub-test'

/** A hub on an in-process bus with one listener on session s1, and what it heard. */
async function heardOf(publish: (bus: MemoryBus, subject: string) => void): Promise<{ event: ServiceEvent; json: string }[]> {
  const bus = new MemoryBus()
  const hub = new SessionHub(bus, PREFIX, pino({ level: 'silent' }))
  const heard: { event: ServiceEvent; json: string }[] = []
  hub.attach('s1', (event, json) => heard.push({ event, json }))
  publish(bus, subjects(PREFIX).events('s1'))
  await bus.flush()
  await bus.close()
  return heard
}

describe('session hub - events off the bus', () => {
  it("hub - takes an in-process publisher's object as it is, without parsing the text", async () => {
    const event = { event: 'answer', data: 'hi', session_id: 's1', seq: 1, ts: 1 } as ServiceEvent
    // A text no parse would accept: only the object can have been delivered.
    const heard = await heardOf((bus, subject) => bus.publish(subject, 'not json', undefined, event))
    expect(heard).toHaveLength(1)
    expect(heard[0]!.event).toBe(event)
    expect(heard[0]!.json).toBe('not json')
  })

  it('hub - parses and checks the text when no object comes with it (NATS), and drops what is malformed', async () => {
    const heard = await heardOf((bus, subject) => {
      bus.publish(subject, '{"event":"answer","data":"hi","session_id":"s1","seq":1}')
      bus.publish(subject, '{"event":"answer","seq":"two"}')
      bus.publish(subject, '{"event":"answer","data":"again","session_id":"s1","seq":2}')
    })
    expect(heard.map(({ event }) => [event.seq, (event as { data?: unknown }).data])).toEqual([
      [1, 'hi'],
      [2, 'again'],
    ])
  })

  it('hub - delivers each event of a message that carries several, in order, each with its own text; a malformed line drops only itself', async () => {
    const lines = [
      '{"event":"answer","data":"a","session_id":"s1","seq":1}',
      '{"event":"answer","seq":"two"}',
      '{"event":"answer","data":"c","session_id":"s1","seq":2}',
    ]
    const heard = await heardOf((bus, subject) => bus.publish(subject, lines.join('\n')))
    expect(heard.map(({ event, json }) => [event.seq, json])).toEqual([
      [1, lines[0]],
      [2, lines[2]],
    ])
  })

  it("hub - a listener that throws on one event of a message still gets the message's next ones", async () => {
    const bus = new MemoryBus()
    const hub = new SessionHub(bus, PREFIX, pino({ level: 'silent' }))
    const heard: number[] = []
    hub.attach('s1', (event) => {
      if (event.seq === 1) throw new Error('the socket is gone')
      heard.push(event.seq!)
    })
    bus.publish(
      subjects(PREFIX).events('s1'),
      ['{"event":"answer","data":"a","session_id":"s1","seq":1}', '{"event":"answer","data":"b","session_id":"s1","seq":2}'].join('\n'),
    )
    await bus.flush()
    await bus.close()
    expect(heard).toEqual([2])
  })
})

describe('session hub - replay from the event log', () => {
  /** A hub whose event log holds `texts` for session s1 (sequences 1, 2, …); what a listener resuming after 0 heard. */
  async function replayOf(texts: string[]): Promise<{ seq: number | undefined; json: string; replayed: boolean | undefined }[]> {
    const stored: StoredEvent[] = texts.map((json, i) => ({ seq: i + 1, json }))
    const events: EventLog = {
      append: () => {},
      lastSeq: async () => stored.length,
      readStored: async (_sessionId, afterSeq) => stored.filter(({ seq }) => seq > afterSeq),
      read: () => Promise.reject(new Error('replay reads the stored texts')),
      flush: async () => {},
      close: async () => {},
    }
    const bus = new MemoryBus()
    const hub = new SessionHub(bus, PREFIX, pino({ level: 'silent' }), events)
    const heard: { seq: number | undefined; json: string; replayed: boolean | undefined }[] = []
    const done = Promise.withResolvers<void>()
    const detach = hub.attach('s1', (event, json, replayed) => heard.push({ seq: event.seq, json, replayed }), { afterSeq: 0, onReplayed: done.resolve })
    await done.promise
    detach()
    await bus.close()
    return heard
  }

  it('hub - a resuming listener gets each stored event as the text it was stored as, byte for byte', async () => {
    // Not what JSON.stringify writes (spaces, an escaped character, a key the schema drops): only the stored text can have come through.
    const texts = [
      '{ "event": "answer", "data": "caf\\u00e9", "session_id": "s1", "seq": 1 }',
      '{"seq":2,"event":"answer","data":"b","session_id":"s1","extra":[1, 2]}',
    ]
    expect(await replayOf(texts)).toEqual([
      { seq: 1, json: texts[0], replayed: true },
      { seq: 2, json: texts[1], replayed: true },
    ])
  })

  it('hub - a stored event that is no valid event is checked as a live one is: the read fails and nothing of it is delivered', async () => {
    expect(await replayOf(['{"event":"answer","data":"a","session_id":"s1","seq":1}', '{"event":"answer","seq":2}'])).toEqual([])
  })
})
