/** How the JetStream event log puts a session's events into messages (state/jetstream-event-log.ts), against a real nats-server. */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { NatsBus } from '../../bus/mod.ts'
import { joinEvents, splitEvents, subjects, type ServiceEvent } from '../../contract/mod.ts'
import { JetStreamEventLog } from '../../state/jetstream-event-log.ts'
import { JetStreamPublisher, RETRY_HEADER } from '../../state/jetstream-publisher.ts'
import { streamName } from '../../state/keys.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'

const PREFIX = `evlog-${process.pid}`
const STREAM = streamName(PREFIX, 'events')

function answer(sessionId: string, seq: number, data = `part ${seq}`): ServiceEvent & { session_id: string; seq: number } {
  return { event: 'answer', data, session_id: sessionId, seq, ts: seq }
}

describe('JetStreamEventLog', () => {
  let nats: NatsFixture
  let bus: NatsBus
  let jsm: JetStreamManager
  let log: JetStreamEventLog

  /** The session's stored messages: their Nats-Msg-Id, event sequences and size. */
  async function stored(sessionId: string) {
    const subject = subjects(PREFIX).events(sessionId)
    const messages: { id: string | undefined; seqs: number[]; bytes: number }[] = []
    for (let seq = 1; ; seq++) {
      const msg = await jsm.direct.getMessage(STREAM, { seq, next_by_subj: subject })
      if (!msg) return messages
      seq = msg.seq
      messages.push({ id: msg.header.get('Nats-Msg-Id'), seqs: splitEvents(msg.string()).map((json) => JSON.parse(json).seq), bytes: msg.data.length })
    }
  }

  const settings = { storage: 'memory' as const, replicas: 1, maxAgeMs: 3_600_000, perSession: 1_000, maxBytes: 256 * 2 ** 20 }

  beforeAll(async () => {
    nats = await startNats()
    bus = await NatsBus.connect(nats.url, { name: 'event-log-test', logger: { warn: () => {} } })
    jsm = await jetstreamManager(bus.connection)
    log = await JetStreamEventLog.open(bus.connection, PREFIX, settings, pino({ level: 'silent' }))
  })
  afterAll(async () => {
    await log?.close()
    await jsm?.streams.delete(STREAM).catch(() => {})
    await bus?.close()
    await nats?.stop()
  })

  it('event log - the events a session appends in one pass go as messages of up to 16, named by their sequences; one alone is a message of its own', async () => {
    for (let seq = 1; seq <= 40; seq++) log.append(answer('batched', seq))
    log.append(answer('other', 1))
    await log.flush()
    log.append(answer('batched', 41))
    await log.flush()
    const subject = subjects(PREFIX).events('batched')
    expect((await stored('batched')).map(({ id, seqs }) => [id, seqs[0], seqs.at(-1), seqs.length])).toEqual([
      [`${subject}:1-16`, 1, 16, 16],
      [`${subject}:17-32`, 17, 32, 16],
      [`${subject}:33-40`, 33, 40, 8],
      [`${subject}:41`, 41, 41, 1],
    ])
    expect((await stored('other')).map(({ seqs }) => seqs)).toEqual([[1]])
    expect(await log.lastSeq('batched')).toBe(41)
    expect((await log.read('batched', 30)).map((event) => event.seq)).toEqual(Array.from({ length: 11 }, (_, i) => 31 + i))
  })

  it("event log - a batch stays within the server's max_payload: large events go in more, smaller messages, every one stored whole", async () => {
    const maxPayload = bus.connection.info!.max_payload
    const data = 'x'.repeat(Math.floor(maxPayload / 5))
    for (let seq = 1; seq <= 10; seq++) log.append(answer('large', seq, data))
    await log.flush()
    const messages = await stored('large')
    expect(messages.length).toBeGreaterThan(1)
    expect(messages.length).toBeLessThan(10)
    for (const { bytes } of messages) expect(bytes).toBeLessThanOrEqual(maxPayload)
    const read = await log.read('large', 0)
    expect(read.map((event) => [event.seq, (event as { data: string }).data.length])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, data.length]))
  })

  it('event log - events whose publisher lost the session are not stored, nor batched with those of its new owner', async () => {
    let ours = true
    const old = () => ours
    const owner = () => true
    log.append(answer('moved', 1), old)
    log.append(answer('moved', 2), old)
    ours = false
    log.append(answer('moved', 3), owner)
    await log.flush()
    expect((await stored('moved')).map(({ seqs }) => seqs)).toEqual([[3]])
  })

  it('event log - a retry stored after later events does not pass for the newest: the highest sequence and the reads after it still count', async () => {
    // As a retried message lands: its first try failed, the next message was stored, then the retry.
    const subject = subjects(PREFIX).events('reordered')
    const texts = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => JSON.stringify(answer('reordered', from + i)))
    const publisher = new JetStreamPublisher(bus.connection, 5_000)
    await publisher.publish(subject, joinEvents(texts(17, 32)), `${subject}:17-32`)
    await new Promise<void>((resolve, reject) =>
      publisher.send(subject, joinEvents(texts(1, 16)), `${subject}:1-16`, (err) => (err ? reject(err) : resolve()), true),
    )
    publisher.close()
    expect((await stored('reordered')).map(({ seqs }) => [seqs[0], seqs.at(-1)])).toEqual([
      [17, 32],
      [1, 16],
    ])
    expect(await log.lastSeq('reordered')).toBe(32)
    expect((await log.read('reordered', 20)).map((event) => event.seq)).toEqual(Array.from({ length: 12 }, (_, i) => 21 + i))
  })

  it('event log - a stored event is read back as the text it was stored as, byte for byte, with its sequence', async () => {
    const subject = subjects(PREFIX).events('verbatim')
    // Not what JSON.stringify writes (spaces, an escaped character, a key the schema does not know): nothing parsed and wrote it again.
    const texts = ['{ "event": "answer", "data": "caf\\u00e9", "seq": 1, "extra": [1, 2] }', '{"seq":2,"event":"answer","data":"line\\nbreak"}']
    const publisher = new JetStreamPublisher(bus.connection, 5_000)
    await publisher.publish(subject, joinEvents(texts), `${subject}:1-2`)
    publisher.close()
    expect(await log.readStored('verbatim', 0)).toEqual([
      { seq: 1, json: texts[0] },
      { seq: 2, json: texts[1] },
    ])
    expect(await log.lastSeq('verbatim')).toBe(2)
  })

  it('event log - a read that fails while the stream is unavailable does not fail the reads after it (a cluster electing a leader)', async () => {
    const prefix = `${PREFIX}-gone`
    const opened = await JetStreamEventLog.open(bus.connection, prefix, settings, pino({ level: 'silent' }))
    try {
      // The stream goes away before this process's first read: the read fails, as it would with no leader.
      await jsm.streams.delete(streamName(prefix, 'events'))
      await expect(opened.lastSeq('s')).rejects.toThrow()
      // It comes back (another process opens it): this process's reads work again.
      const reopened = await JetStreamEventLog.open(bus.connection, prefix, settings, pino({ level: 'silent' }))
      reopened.append(answer('s', 1))
      await reopened.flush()
      await reopened.close()
      expect(await opened.lastSeq('s')).toBe(1)
      expect((await opened.readStored('s', 0)).map((event) => event.seq)).toEqual([1])
    } finally {
      await opened.close()
      await jsm.streams.delete(streamName(prefix, 'events')).catch(() => {})
    }
  })

  it('event log - a message sent again after a failed try is marked as a retry; its first try is not', async () => {
    const prefix = `${PREFIX}-retry`
    const warnings: string[] = []
    const retrying = await JetStreamEventLog.open(
      bus.connection,
      prefix,
      settings,
      pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }),
    )
    try {
      // With no stream the server answers "no responders": the publish fails and is retried until the stream is back.
      await jsm.streams.delete(streamName(prefix, 'events'))
      retrying.append(answer('again', 1))
      await vi.waitFor(() => expect(warnings.join('')).toContain('event publish failed; retrying'))
      await (await JetStreamEventLog.open(bus.connection, prefix, settings, pino({ level: 'silent' }))).close()
      await retrying.flush()
      // MsgHdrs.get answers '' for a header the message does not have.
      const header = async (sessionId: string) =>
        (await jsm.direct.getMessage(streamName(prefix, 'events'), { last_by_subj: subjects(prefix).events(sessionId) }))?.header.get(RETRY_HEADER)
      expect(await header('again')).toBe('1')
      expect(await retrying.lastSeq('again')).toBe(1)
      retrying.append(answer('fresh', 1))
      await retrying.flush()
      expect(await header('fresh')).toBe('')
    } finally {
      await retrying.close()
      await jsm.streams.delete(streamName(prefix, 'events')).catch(() => {})
    }
  })
})
