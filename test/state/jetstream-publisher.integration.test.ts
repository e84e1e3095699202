/** Publishing to JetStream with acknowledgements on one inbox (state/jetstream-publisher.ts) against a real nats-server. */
import { jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsBus } from '../../bus/mod.ts'
import { JetStreamPublishError, JetStreamPublisher } from '../../state/jetstream-publisher.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'

const STREAM = `pubtest_${process.pid}`

describe('JetStreamPublisher', () => {
  let nats: NatsFixture
  let bus: NatsBus
  let publisher: JetStreamPublisher

  beforeAll(async () => {
    nats = await startNats()
    bus = await NatsBus.connect(nats.url, { name: 'publisher-test', logger: { warn: () => {} } })
    const jsm = await jetstreamManager(bus.connection)
    await jsm.streams.add({
      name: STREAM,
      subjects: [`${STREAM}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.Memory,
      duplicate_window: 60_000_000_000,
    })
    publisher = new JetStreamPublisher(bus.connection, 5_000)
  })
  afterAll(async () => {
    publisher?.close()
    await bus?.close()
    await nats?.stop()
  })

  it('publisher - every publish resolves once stored, in order; a re-sent message id is stored once', async () => {
    await Promise.all(Array.from({ length: 200 }, (_, i) => publisher.publish(`${STREAM}.a`, `m${i}`, `a:${i}`)))
    await publisher.publish(`${STREAM}.a`, 'm7 again', 'a:7')
    const jsm = await jetstreamManager(bus.connection)
    const info = await jsm.streams.info(STREAM)
    expect(info.state.messages).toBe(200)
    const stored = await jsm.streams.getMessage(STREAM, { seq: 8 })
    expect(stored?.string()).toBe('m7')
    // The header as the server read it (the publisher encodes it itself).
    expect(stored?.header.get('Nats-Msg-Id')).toBe('a:7')
  })

  it('publisher - a subject no stream stores is refused, not left waiting', async () => {
    await expect(publisher.publish('nostream.x', 'lost', 'x:1')).rejects.toBeInstanceOf(JetStreamPublishError)
  })

  it('publisher - close fails what still waits', async () => {
    const closing = new JetStreamPublisher(bus.connection, 5_000)
    const waiting = closing.publish(`${STREAM}.b`, 'late', 'b:1')
    closing.close()
    await expect(waiting).rejects.toThrow('publisher closed')
  })
})
