import { createInbox, PermissionViolationError, TimeoutError, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node'

/** A publish the server did not acknowledge (it answered an error, or nobody stored the subject). */
export class JetStreamPublishError extends Error {
  override readonly name = 'JetStreamPublishError'
}

interface Waiting {
  subject: string
  sentAt: number
  /** Called once: without an error when stored. */
  done(err?: Error): void
}

/**
 * Set on a message sent again after a failed try: it may be stored after messages sent after it
 * (state/jetstream-event-log.ts reads a subject's newest message with that in mind).
 */
export const RETRY_HEADER = 'Ar-Retry'

/** How often acknowledgements older than the timeout are looked for. */
const SWEEP_MS = 250

/**
 * Publishes to JetStream-stored subjects without a request per message: each
 * message goes out as a plain publish whose reply subject is on one inbox
 * subscription of this publisher; the server's acknowledgement (or error)
 * arrives there and settles that publish. One timer for all of them instead of
 * one per message, and no Error built per message: the NATS client's request()
 * builds one for every reply (about a sixth of the runner's CPU while relaying).
 * `msgID` is the Nats-Msg-Id the stream deduplicates on, so a retry is safe.
 */
export class JetStreamPublisher {
  readonly #nc: NatsConnection
  readonly #timeoutMs: number
  readonly #inbox: string
  readonly #subscription: Subscription
  /** In send order: the oldest first, which the sweep relies on. */
  readonly #waiting = new Map<string, Waiting>()
  #next = 0
  /** Publishes waiting for the end of this event-loop pass (#send). */
  #outbox: { id: string; subject: string; data: string; msgID: string; retry: boolean }[] = []
  #sweep: NodeJS.Timeout | undefined

  constructor(nc: NatsConnection, timeoutMs: number) {
    this.#nc = nc
    this.#timeoutMs = timeoutMs
    // The connection's own inbox prefix: NATS permissions let each role subscribe under its own only.
    this.#inbox = createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix)
    this.#subscription = nc.subscribe(`${this.#inbox}.*`, {
      callback: (err, msg) => {
        // The callbacks settled here run on the client's socket reader, where a throw would stop it
        // reading: thrown again outside, it crashes the process as it would anywhere else.
        try {
          if (err) this.#refused(err)
          else this.#acknowledged(msg)
        } catch (thrown) {
          queueMicrotask(() => {
            throw thrown
          })
        }
      },
    })
    void this.#watchPermissions()
  }

  /** Resolves once the stream stored the message (or had it already: a duplicate). */
  publish(subject: string, data: string, msgID: string): Promise<void> {
    return new Promise((resolve, reject) => this.send(subject, data, msgID, (err) => (err ? reject(err) : resolve())))
  }

  /**
   * As publish(), with a callback instead of a promise: the event log sends one per relayed event,
   * and a promise, its reactions and their ticks were a seventh of what the runner allocated for each.
   * `retry`: a message sent before, marked with RETRY_HEADER.
   */
  send(subject: string, data: string, msgID: string, done: (err?: Error) => void, retry = false): void {
    const id = String(this.#next++)
    this.#waiting.set(id, { subject, sentAt: Date.now(), done })
    this.#sweep ??= setInterval(() => this.#expire(), SWEEP_MS).unref()
    this.#outbox.push({ id, subject, data, msgID, retry })
    if (this.#outbox.length === 1) setImmediate(this.#send)
  }

  /**
   * Hands the publishes of one event-loop pass to the client together: it writes what it holds
   * at the end of each callback, and acknowledgements arrive a few per read, so publishing each
   * as its slot freed cost a socket write for every few messages (28% of the runner's CPU).
   */
  readonly #send = () => {
    for (const { id, subject, data, msgID, retry } of this.#outbox.splice(0)) {
      try {
        this.#nc.publish(subject, data, { reply: `${this.#inbox}.${id}`, headers: new MsgIdHeader(msgID, retry) as unknown as MsgHdrs })
      } catch (err) {
        this.#settle(id)?.done(err as Error)
      }
    }
  }

  /** Fails what waits for an acknowledgement and stops listening. */
  close(): void {
    this.#subscription.unsubscribe()
    clearInterval(this.#sweep)
    this.#outbox = []
    for (const id of [...this.#waiting.keys()]) this.#settle(id)?.done(new JetStreamPublishError('publisher closed'))
  }

  #acknowledged(msg: Msg): void {
    const id = msg.subject.slice(this.#inbox.length + 1)
    const waiting = this.#settle(id)
    if (!waiting) return // timed out already; the retry has its own id
    // A status message (503: no stream stores the subject) has headers and no body.
    if (msg.headers?.hasError)
      return waiting.done(new JetStreamPublishError(`no acknowledgement for ${waiting.subject}: ${msg.headers.code} ${msg.headers.description}`))
    // The server's acknowledgement of a stored message starts `{"stream":` and names no error: taken
    // as it is, without decoding and parsing it (one per relayed event). Anything else is parsed.
    if (isPlainAck(msg.data)) return waiting.done()
    let ack: { error?: { code?: number; description?: string }; stream?: string }
    try {
      ack = msg.json()
    } catch {
      return waiting.done(new JetStreamPublishError(`malformed acknowledgement for ${waiting.subject}`))
    }
    if (ack.error) return waiting.done(new JetStreamPublishError(`JetStream refused ${waiting.subject}: ${ack.error.code} ${ack.error.description}`))
    waiting.done()
  }

  /** The inbox subscription itself was refused: nothing can be acknowledged. */
  #refused(err: Error): void {
    for (const id of [...this.#waiting.keys()]) this.#settle(id)?.done(err)
  }

  /** A publish the connection may not make fails at once, as a request to it would. */
  async #watchPermissions(): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type !== 'error' || !(status.error instanceof PermissionViolationError) || status.error.operation !== 'publish') continue
      const refused = status.error
      for (const [id, waiting] of this.#waiting) {
        if (waiting.subject !== refused.subject) continue
        this.#settle(id)
        waiting.done(new JetStreamPublishError(refused.message, { cause: refused }))
        break
      }
    }
  }

  #expire(): void {
    const before = Date.now() - this.#timeoutMs
    for (const [id, waiting] of this.#waiting) {
      if (waiting.sentAt > before) break
      this.#settle(id)
      waiting.done(new TimeoutError())
    }
  }

  #settle(id: string): Waiting | undefined {
    const waiting = this.#waiting.get(id)
    this.#waiting.delete(id)
    return waiting
  }
}

const ACK_START = Buffer.from('{"stream":')
const ERROR_KEY = Buffer.from('"error"')

/** Whether an acknowledgement's bytes are a plain success: `{"stream":…}` with no `"error"` anywhere. */
export function isPlainAck(data: Uint8Array): boolean {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return bytes.subarray(0, ACK_START.length).equals(ACK_START) && !bytes.includes(ERROR_KEY)
}

/**
 * The headers an event's publish carries, encoded as the client's own headers encode
 * (`NATS/1.0\r\nNats-Msg-Id: <id>\r\n\r\n`, and RETRY_HEADER on a retry); the client calls
 * nothing but encode() on a publish's headers. A MsgHdrs per message (its Map, key checks and
 * string building) was a tenth of what the runner allocated per relayed event. The integration
 * test's deduplicated re-send holds the encoding to what the server reads.
 */
class MsgIdHeader {
  readonly #msgID: string
  readonly #retry: boolean
  constructor(msgID: string, retry: boolean) {
    this.#msgID = msgID
    this.#retry = retry
  }

  encode(): Uint8Array {
    return Buffer.from(`NATS/1.0\r\nNats-Msg-Id: ${this.#msgID}\r\n${this.#retry ? `${RETRY_HEADER}: 1\r\n` : ''}\r\n`)
  }
}
