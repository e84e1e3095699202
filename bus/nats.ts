import { readFile } from 'node:fs/promises'
import {
  ClosedConnectionError,
  connect,
  credsAuthenticator,
  DrainingConnectionError,
  headers as natsHeaders,
  RequestError,
  TimeoutError,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node'
import {
  BusClosedError,
  BusNoRespondersError,
  BusTimeoutError,
  type Bus,
  type BusMessage,
  type Headers,
  type RequestOptions,
  type SubscribeOptions,
  type Subscription,
} from './bus.ts'

/** Wait between reconnect attempts: short, so a restarted server is found again quickly. */
const RECONNECT_WAIT_MS = 250
/** How long close() lets pending messages drain before cutting the connection. */
const CLOSE_DRAIN_MS = 2_000

/** The subset of a pino logger the bus writes to. */
export interface NatsBusLogger {
  warn(obj: object, msg: string): void
  error?(obj: object, msg: string): void
}

export interface NatsBusOptions {
  /** The connection name the server shows (`connz`), e.g. `gateway` or `runner-<id>`. */
  name: string
  logger?: NatsBusLogger
  /** How to authenticate (config `nats.user`/`password`, `token` or `creds_file`); none: anonymous. */
  auth?: NatsAuth | undefined
  /** Where replies to this connection's requests arrive (config `nats.inbox_prefix`); none: `_INBOX`. */
  inboxPrefix?: string | undefined
}

/**
 * One way to authenticate to the server. `creds` holds a `.creds` text in memory and is asked at
 * every (re)connect, so a renewed credential is used from the next reconnect (`reconnect()`).
 */
export type NatsAuth = { user: string; password: string } | { token: string } | { credsFile: string } | { creds: () => string }

/** Connection changes worth acting on; NATS's other status events are left out. */
export type NatsBusStatus = { type: 'disconnect'; server: string } | { type: 'reconnect'; server: string } | { type: 'error'; error: Error } | { type: 'close' }

const consoleLogger: NatsBusLogger = {
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
}

/**
 * The bus over a NATS server. The connection reconnects forever; while it is
 * down, publishes are buffered by the client and requests time out.
 */
export class NatsBus implements Bus {
  readonly kind = 'nats'
  readonly #nc: NatsConnection
  readonly #log: NatsBusLogger
  readonly #listeners = new Set<(status: NatsBusStatus) => void>()
  #connected = true
  #closing: Promise<void> | undefined

  /** Connects to `url`; rejects at once when no server answers there. */
  static async connect(url: string, options: NatsBusOptions): Promise<NatsBus> {
    const auth = await authOptions(options.auth)
    let nc: NatsConnection
    try {
      nc = await connect({
        servers: url,
        name: options.name,
        ...auth,
        ...(options.inboxPrefix !== undefined && { inboxPrefix: options.inboxPrefix }),
        maxReconnectAttempts: -1,
        reconnectTimeWait: RECONNECT_WAIT_MS,
        // A wrong URL must fail start-up instead of retrying in the background.
        waitOnFirstConnect: false,
        // Otherwise every request, and so every JetStream publish, builds two Error objects with stack
        // traces up front: measured at about a sixth of the runner's CPU while relaying events.
        noAsyncTraces: true,
      })
    } catch (err) {
      throw new Error(`cannot connect to NATS at ${url}`, { cause: err })
    }
    return new NatsBus(nc, options.logger ?? consoleLogger)
  }

  private constructor(nc: NatsConnection, log: NatsBusLogger) {
    this.#nc = nc
    this.#log = log
    this.#watchStatus().catch((err: unknown) => this.#logError({ err }, 'bus status watch failed'))
  }

  /** The NATS connection itself, for JetStream and key-value clients that share it. */
  get connection(): NatsConnection {
    return this.#nc
  }

  /** Whether the connection is up now (false while reconnecting and after close). */
  isConnected(): boolean {
    return this.#connected && !this.#nc.isClosed()
  }

  /**
   * Drops the connection and connects again at once, with the credentials asked anew (a renewed
   * `creds`); subscriptions are restored and publishes buffered meanwhile, as after any reconnect.
   */
  async reconnect(): Promise<void> {
    await this.#nc.reconnect()
  }

  /** Calls `listener` on each connection change; returns a function that stops it. */
  onStatus(listener: (status: NatsBusStatus) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  publish(subject: string, data: string, headers?: Headers): void {
    if (this.#closing) throw new BusClosedError()
    this.#guard(() => this.#nc.publish(subject, data, headers ? { headers: toNatsHeaders(headers) } : undefined))
  }

  subscribe(subject: string, handler: (msg: BusMessage) => void, options: SubscribeOptions = {}): Subscription {
    if (this.#closing) throw new BusClosedError()
    const sub = this.#guard(() =>
      this.#nc.subscribe(subject, {
        ...(options.queue !== undefined && { queue: options.queue }),
        callback: (err, msg) => {
          if (err) {
            this.#log.warn({ err, subject }, 'bus subscription failed')
            return
          }
          // A throw would unwind into the client's socket reader; keep it here.
          try {
            handler(this.#toBusMessage(msg))
          } catch (err) {
            this.#logError({ err, subject: msg.subject, pattern: subject }, 'bus handler failed')
          }
        },
      }),
    )
    return { unsubscribe: () => sub.unsubscribe() }
  }

  async request(subject: string, data: string, options: RequestOptions): Promise<BusMessage> {
    if (this.#closing) throw new BusClosedError()
    try {
      const reply = await this.#nc.request(subject, data, {
        timeout: options.timeoutMs,
        ...(options.headers && { headers: toNatsHeaders(options.headers) }),
      })
      return this.#toBusMessage(reply)
    } catch (err) {
      throw this.#toBusError(err, subject, options.timeoutMs)
    }
  }

  async flush(): Promise<void> {
    if (this.#closing) throw new BusClosedError()
    try {
      await this.#nc.flush()
    } catch (err) {
      throw this.#toBusError(err)
    }
  }

  /** Drains (pending publishes reach the server) when connected, then closes. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    if (this.#nc.isClosed()) return
    if (this.isConnected()) {
      let timer: NodeJS.Timeout | undefined
      const drained = this.#nc.drain().then(
        () => true,
        () => false,
      )
      const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_DRAIN_MS)))
      await Promise.race([drained, timedOut])
      clearTimeout(timer)
    }
    if (!this.#nc.isClosed()) await this.#nc.close()
  }

  async #watchStatus(): Promise<void> {
    for await (const status of this.#nc.status()) {
      let event: NatsBusStatus | undefined
      switch (status.type) {
        case 'disconnect':
          this.#connected = false
          this.#log.warn({ server: status.server }, 'bus disconnected')
          event = { type: 'disconnect', server: status.server }
          break
        case 'reconnect':
          this.#connected = true
          this.#log.warn({ server: status.server }, 'bus reconnected')
          event = { type: 'reconnect', server: status.server }
          break
        case 'error':
          this.#log.warn({ err: status.error }, 'bus error')
          event = { type: 'error', error: status.error }
          break
        case 'slowConsumer':
          // The client drops messages past its pending limit; worth knowing.
          this.#log.warn({ subject: status.sub.getSubject(), pending: status.pending }, 'bus slow consumer')
          break
        case 'close':
          this.#connected = false
          event = { type: 'close' }
          break
      }
      if (event) for (const listener of this.#listeners) this.#notify(listener, event)
    }
  }

  #notify(listener: (status: NatsBusStatus) => void, event: NatsBusStatus): void {
    try {
      listener(event)
    } catch (err) {
      this.#logError({ err, status: event.type }, 'bus status listener failed')
    }
  }

  #toBusMessage(msg: Msg): BusMessage {
    return new NatsBusMessage(msg, this.#guardReply)
  }

  readonly #guardReply = (reply: () => void) => this.#guard(reply)

  /** Runs a synchronous client call, turning "connection closed" into BusClosedError. */
  #guard<T>(fn: () => T): T {
    try {
      return fn()
    } catch (err) {
      throw this.#toBusError(err)
    }
  }

  #toBusError(err: unknown, subject?: string, timeoutMs?: number): unknown {
    if (err instanceof TimeoutError && subject !== undefined && timeoutMs !== undefined) {
      return new BusTimeoutError(subject, timeoutMs, { cause: err })
    }
    if (err instanceof RequestError && err.isNoResponders() && subject !== undefined) {
      return new BusNoRespondersError(subject, { cause: err })
    }
    // A request pending when the connection closes fails with a plain RequestError.
    if (err instanceof ClosedConnectionError || err instanceof DrainingConnectionError || this.#closing || this.#nc.isClosed()) {
      return new BusClosedError({ cause: err })
    }
    return err
  }

  #logError(obj: object, msg: string): void {
    if (this.#log.error) this.#log.error(obj, msg)
    else this.#log.warn(obj, msg)
  }
}

function toNatsHeaders(record: Headers): MsgHdrs {
  const h = natsHeaders()
  for (const [key, value] of Object.entries(record)) h.set(key, value)
  return h
}

/** The last value of each header; undefined when there are none (as MemoryBus does). */
function fromNatsHeaders(h: MsgHdrs | undefined): Headers | undefined {
  if (!h) return undefined
  const keys = h.keys()
  if (keys.length === 0) return undefined
  const record: Headers = {}
  for (const key of keys) record[key] = h.last(key)
  return record
}

/** The client's connect options for `auth`; a creds file is read now, so a missing one fails start-up. */
async function authOptions(auth: NatsAuth | undefined) {
  if (auth === undefined) return {}
  if ('user' in auth) return { user: auth.user, pass: auth.password }
  if ('token' in auth) return { token: auth.token }
  if ('creds' in auth) {
    const { creds: current } = auth
    return { authenticator: credsAuthenticator(() => new TextEncoder().encode(current())) }
  }
  let creds: Uint8Array
  try {
    creds = await readFile(auth.credsFile)
  } catch (err) {
    throw new Error(`cannot read the NATS credentials file ${auth.credsFile}: ${(err as Error).message}`, { cause: err })
  }
  // The client would only find out when it connects, and say "unable to parse credentials" without the file.
  const text = new TextDecoder().decode(creds)
  if (!/BEGIN NATS USER JWT/.test(text) || !/BEGIN USER NKEY SEED/.test(text)) {
    throw new Error(`the NATS credentials file ${auth.credsFile} is not a .creds file: it needs a user JWT and an NKey seed block`)
  }
  return { authenticator: credsAuthenticator(creds) }
}

/**
 * A message off NATS. A class, not an object literal with a getter and a closure: a gateway makes
 * one per relayed event, and the literal cost two closures and an accessor pair each (about a
 * tenth of what the gateway allocated per event).
 */
class NatsBusMessage implements BusMessage {
  readonly subject: string
  readonly data: string
  readonly #msg: Msg
  readonly #guard: (reply: () => void) => void
  #headers: Headers | undefined | null = null

  constructor(msg: Msg, guard: (reply: () => void) => void) {
    this.subject = msg.subject
    this.data = msg.string()
    this.#msg = msg
    this.#guard = guard
  }

  /** Decoded when asked: the events a gateway relays carry a message id header nobody there reads. */
  get headers(): Headers | undefined {
    if (this.#headers === null) this.#headers = fromNatsHeaders(this.#msg.headers)
    return this.#headers
  }

  respond(data: string, replyHeaders?: Headers): void {
    const msg = this.#msg
    if (!msg.reply) return
    this.#guard(() => msg.respond(data, replyHeaders ? { headers: toNatsHeaders(replyHeaders) } : undefined))
  }
}
