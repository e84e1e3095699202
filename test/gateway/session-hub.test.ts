import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { subjects, type ServiceEvent } from '../../contract/mod.ts'
import { SessionHub } from '../../gateway/session-hub.ts'

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
  it('hub - takes an in-process publisher\'s object as it is, without parsing the text', async () => {
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
    const lines = ['{"event":"answer","data":"a","session_id":"s1","seq":1}', '{"event":"answer","seq":"two"}', '{"event":"answer","data":"c","session_id":"s1","seq":2}']
    const heard = await heardOf((bus, subject) => bus.publish(subject, lines.join('\n')))
    expect(heard.map(({ event, json }) => [event.seq, json])).toEqual([
      [1, lines[0]],
      [2, lines[2]],
    ])
  })

  it('hub - a listener that throws on one event of a message still gets the message\'s next ones', async () => {
    const bus = new MemoryBus()
    const hub = new SessionHub(bus, PREFIX, pino({ level: 'silent' }))
    const heard: number[] = []
    hub.attach('s1', (event) => {
      if (event.seq === 1) throw new Error('the socket is gone')
      heard.push(event.seq!)
    })
    bus.publish(subjects(PREFIX).events('s1'), ['{"event":"answer","data":"a","session_id":"s1","seq":1}', '{"event":"answer","data":"b","session_id":"s1","seq":2}'].join('\n'))
    await bus.flush()
    await bus.close()
    expect(heard).toEqual([2])
  })
})
