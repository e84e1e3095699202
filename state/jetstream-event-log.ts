import {
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/nats-core'
import { PermissionViolationError } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { joinEvents, splitEvents } from '../contract/event-batch.ts'
import { parseEvent, type ServiceEvent } from '../contract/events.ts'
import { subjects, type Subjects } from '../contract/subjects.ts'
import type { EventLog, StoredEvent } from './event-log.ts'
import { eventSeq } from './event-seq.ts'
import { streamName } from './keys.ts'
import { fitEvent, messageRoom } from './fit-event.ts'
import { JetStreamPublisher, RETRY_HEADER } from './jetstream-publisher.ts'
import { ReliablePublisher } from './reliable-publisher.ts'

export interface EventStreamSettings {
  storage: 'file' | 'memory'
  replicas: number
  maxAgeMs: number
  perSession: number
  maxBytes: number
  /** False: use the stream as it is (a credential that may only look it up); default true. */
  create?: boolean | undefined
}

/** JetStream wants durations in nanoseconds. */
const NANOS_PER_MS = 1_000_000
/** The server drops a re-sent event with the same id within this window. */
const DUPLICATE_WINDOW_MS = 10 * 60_000
const PUBLISH_WINDOW = 512
const PUBLISH_TIMEOUT_MS = 5_000
/** nats-server's default max_payload, when the server did not say. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024
/**
 * Most events one message carries. The stream keeps `perSession` messages per session, so a session
 * keeps between that many events and this many times more; batches bigger than this saved little more.
 */
const BATCH_EVENTS = 16

interface Pending {
  subject: string
  data: string
  msgID: string
  publishable?: (() => boolean) | undefined
  /** Times it was sent. */
  tries: number
}

/** A session's events appended in this pass, not yet handed to the publisher. */
interface Batch {
  subject: string
  texts: string[]
  /** Their UTF-8 size with the line breaks. */
  bytes: number
  firstSeq: number
  lastSeq: number
  publishable: (() => boolean) | undefined
}

/**
 * Session events in a JetStream stream: one subject per session, the newest
 * `perSession` messages kept. Publishing through JetStream also delivers to the
 * gateways' plain subscriptions, so live relay and storage are one publish.
 * The events a session appends in one pass (one read of its CLI's output) go
 * as one message (contract/event-batch.ts), up to BATCH_EVENTS and the
 * server's max_payload.
 */
export class JetStreamEventLog implements EventLog {
  readonly #js: JetStreamClient
  readonly #jsm: JetStreamManager
  readonly #stream: string
  readonly #subjects: Subjects
  readonly #publisher: ReliablePublisher<Pending>
  readonly #acknowledged: JetStreamPublisher
  /** The server's largest message. */
  readonly #maxPayload: number
  /** The bytes of events one message may carry. */
  readonly #room: number
  /** By subject: the batches of this pass, published at its end. */
  #batches = new Map<string, Batch>()

  private constructor(nc: NatsConnection, jsm: JetStreamManager, stream: string, subjectPrefix: string, log: Logger, maxPayload: number) {
    this.#maxPayload = maxPayload
    this.#room = messageRoom(maxPayload)
    this.#js = jetstream(nc)
    this.#acknowledged = new JetStreamPublisher(nc, PUBLISH_TIMEOUT_MS)
    this.#jsm = jsm
    this.#stream = stream
    this.#subjects = subjects(subjectPrefix)
    this.#publisher = new ReliablePublisher<Pending>({
      window: PUBLISH_WINDOW,
      publish: (item, done) => this.#acknowledged.send(item.subject, item.data, item.msgID, done, item.tries++ > 0),
      backoffMs: (attempt) => Math.min(2_000, 50 * 2 ** attempt),
      onRetry: (err, waiting) => log.warn({ err, waiting }, 'event publish failed; retrying'),
      // A connection closed for good (its credential expired and was refused on every reconnect, say)
      // publishes nothing ever again: retrying would only hold the runner's shutdown for ever.
      isPermanent: (err) => isPermissionViolation(err) || nc.isClosed(),
      isStale: (item) => item.publishable?.() === false,
      onStale: (item) => log.warn({ subject: item.subject, msg_id: item.msgID }, 'event dropped: this runner lost the session before it was stored'),
      onDrop: (item, err) =>
        log.error(
          { err, subject: item.subject, msg_id: item.msgID },
          nc.isClosed()
            ? 'event dropped: the NATS connection is closed for good'
            : 'event dropped: NATS does not allow this runner to publish it (check its permissions)',
        ),
    })
  }

  /** Opens the stream, creating it (or updating its limits) as configured; with `create: false` it must exist. */
  static async open(nc: NatsConnection, subjectPrefix: string, settings: EventStreamSettings, log: Logger): Promise<JetStreamEventLog> {
    const jsm = await jetstreamManager(nc)
    const name = streamName(subjectPrefix, 'events')
    const config = {
      name,
      subjects: [subjects(subjectPrefix).allEvents],
      retention: RetentionPolicy.Limits,
      storage: settings.storage === 'file' ? StorageType.File : StorageType.Memory,
      num_replicas: settings.replicas,
      max_age: settings.maxAgeMs * NANOS_PER_MS,
      max_msgs_per_subject: settings.perSession,
      max_bytes: settings.maxBytes,
      discard: DiscardPolicy.Old,
      duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
      // Reads of a session's newest event name the subject in the request's subject, so a
      // credential can be allowed its own session's only (contract/permissions.ts, session-runner).
      allow_direct: true,
    }
    if (settings.create === false) await jsm.streams.info(name)
    else {
      try {
        await jsm.streams.info(name)
        await jsm.streams.update(name, config)
      } catch {
        await jsm.streams.add(config)
      }
    }
    return new JetStreamEventLog(nc, jsm, name, subjectPrefix, log, nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD)
  }

  append(event: ServiceEvent & { session_id: string; seq: number }, publishable?: () => boolean): void {
    const subject = this.#subjects.events(event.session_id)
    const text = fitEvent(event, this.#maxPayload)
    const bytes = Buffer.byteLength(text) + 1
    const open = this.#batches.get(subject)
    if (open && open.texts.length < BATCH_EVENTS && open.bytes + bytes <= this.#room && open.publishable === publishable) {
      open.texts.push(text)
      open.bytes += bytes
      open.lastSeq = event.seq
      return
    }
    if (open) this.#send(open)
    if (this.#batches.size === 0) queueMicrotask(this.#sendBatches)
    this.#batches.set(subject, { subject, texts: [text], bytes, firstSeq: event.seq, lastSeq: event.seq, publishable })
  }

  /** The end of the pass: each session's events appended in it go out as one message. */
  readonly #sendBatches = () => {
    const batches = this.#batches
    this.#batches = new Map()
    for (const batch of batches.values()) this.#send(batch)
  }

  #send({ subject, texts, firstSeq, lastSeq, publishable }: Batch): void {
    // The id the server deduplicates a retried message on: its events' sequences.
    const msgID = firstSeq === lastSeq ? `${subject}:${firstSeq}` : `${subject}:${firstSeq}-${lastSeq}`
    this.#publisher.push({ subject, data: joinEvents(texts), msgID, publishable, tries: 0 })
  }

  /** Whether the stream answers direct gets (made before allow_direct was set: not until a gateway updates it). */
  #direct: Promise<boolean> | undefined

  /**
   * Asked once and kept, but only an answer is kept: a failure (the stream had no leader while
   * a cluster elected one) is forgotten, so the next read asks again. A kept rejection failed every
   * read of this process with the same `timeout` long after the cluster was healthy again.
   */
  #isDirect(): Promise<boolean> {
    if (this.#direct) return this.#direct
    const asked = this.#jsm.streams.info(this.#stream).then((info) => info.config.allow_direct === true)
    this.#direct = asked
    asked.catch(() => {
      if (this.#direct === asked) this.#direct = undefined
    })
    return asked
  }

  /** The newest message of `subject`; null when it has none. */
  async #newest(subject: string) {
    if (await this.#isDirect()) return this.#jsm.direct.getMessage(this.#stream, { last_by_subj: subject })
    return this.#jsm.streams.getMessage(this.#stream, { last_by_subj: subject })
  }

  /**
   * The session's newest message and, when it tells, the highest sequence stored: the last of its
   * events. It does not tell when that event is unnumbered (the controller's SANDBOX_* error, a
   * live-only event) or when the message is a retry, which may have been stored after messages
   * with later events; the first try of every message goes out in sequence order.
   */
  async #newestSeq(subject: string) {
    // getMessage answers null for "no message"; any other failure must not pass for an empty session.
    const message = await this.#newest(subject)
    if (!message) return { message, seq: 0 }
    if (message.header?.get(RETRY_HEADER)) return { message, seq: undefined }
    return { message, seq: eventSeq(splitEvents(message.string()).at(-1)!) }
  }

  async lastSeq(sessionId: string): Promise<number> {
    const { seq } = await this.#newestSeq(this.#subjects.events(sessionId))
    if (seq !== undefined) return seq
    // The events before it say where the session's sequence stands. Only a takeover after such a message reads them.
    return (await this.readStored(sessionId, 0)).at(-1)?.seq ?? 0
  }

  async readStored(sessionId: string, afterSeq: number): Promise<StoredEvent[]> {
    const subject = this.#subjects.events(sessionId)
    const { message: last, seq: lastSeq } = await this.#newestSeq(subject)
    // Nothing after the sequence asked for: no need to read the session's events.
    if (lastSeq !== undefined && lastSeq <= afterSeq) return []
    const consumer = await this.#js.consumers.get(this.#stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All })
    const bySeq = new Map<number, string>()
    const messages = await consumer.consume({ max_messages: 1_000 })
    try {
      for await (const msg of messages) {
        for (const json of splitEvents(msg.string())) {
          const seq = eventSeq(json)
          if (seq !== undefined && seq > afterSeq) bySeq.set(seq, json)
        }
        if (msg.seq >= (last?.seq ?? 0) || msg.info.pending === 0) break
      }
    } finally {
      await messages.close()
    }
    // A retried publish may have landed after later events: order by the session's own sequence.
    return [...bySeq].sort(([a], [b]) => a - b).map(([seq, json]) => ({ seq, json }))
  }

  async read(sessionId: string, afterSeq: number): Promise<ServiceEvent[]> {
    return (await this.readStored(sessionId, afterSeq)).map(({ json }) => parseEvent(json))
  }

  flush(): Promise<void> {
    this.#sendBatches()
    return this.#publisher.flush()
  }

  async close(): Promise<void> {
    this.#batches.clear()
    this.#publisher.close()
    this.#acknowledged.close()
  }
}

/** NATS refused the publish for the connection's permissions: no retry changes that. */
function isPermissionViolation(err: unknown): boolean {
  for (let cause: unknown = err; cause instanceof Error; cause = cause.cause) if (cause instanceof PermissionViolationError) return true
  return false
}
