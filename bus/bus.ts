/**
 * The bus the gateway and runners talk over. Two implementations: in-process
 * (dev mode, no server) and NATS. Payloads are JSON text; subjects follow NATS
 * rules (`.`-separated tokens, `*` matches one token, `>` the rest).
 */
export type Headers = Record<string, string>

export interface BusMessage {
  readonly subject: string
  readonly data: string
  readonly headers?: Headers
  /**
   * The in-process bus only: the object `data` is the JSON text of, as its publisher passed it,
   * so a subscriber in the same process can skip parsing it. Shared with the publisher and the
   * other subscribers: read-only. Never set on a message that crossed NATS.
   */
  readonly value?: unknown
  /** Answers a request; a no-op for plain publishes. */
  respond(data: string, headers?: Headers): void
}

export interface Subscription {
  unsubscribe(): void
}

export interface SubscribeOptions {
  /** Messages go to one member of the queue group instead of all subscribers. */
  queue?: string
}

export interface RequestOptions {
  timeoutMs: number
  headers?: Headers
}

export interface Bus {
  readonly kind: 'memory' | 'nats'
  /** `value`: the object `data` serialises, handed to in-process subscribers as is (BusMessage.value); NATS ignores it. */
  publish(subject: string, data: string, headers?: Headers, value?: unknown): void
  subscribe(subject: string, handler: (msg: BusMessage) => void, options?: SubscribeOptions): Subscription
  /**
   * Sends a request and waits for one reply. Rejects with BusNoRespondersError
   * at once when nobody subscribes, BusTimeoutError after `timeoutMs`.
   */
  request(subject: string, data: string, options: RequestOptions): Promise<BusMessage>
  /** Resolves when everything published so far has reached the server. */
  flush(): Promise<void>
  close(): Promise<void>
}

/** Nobody listens on the subject: the runner is gone. */
export class BusNoRespondersError extends Error {
  override readonly name = 'BusNoRespondersError'
  constructor(subject: string, options?: { cause?: unknown }) {
    super(`no responders on ${subject}`, options)
  }
}

/** Somebody listens but did not answer in time. */
export class BusTimeoutError extends Error {
  override readonly name = 'BusTimeoutError'
  constructor(subject: string, timeoutMs: number, options?: { cause?: unknown }) {
    super(`no reply on ${subject} within ${timeoutMs} ms`, options)
  }
}

/** The bus was closed. */
export class BusClosedError extends Error {
  override readonly name = 'BusClosedError'
  constructor(options?: { cause?: unknown }) {
    super('bus closed', options)
  }
}

/** NATS subject matching: `*` matches one token, a final `>` one or more. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.')
  const s = subject.split('.')
  for (let i = 0; i < p.length; i++) {
    const token = p[i]
    if (token === '>') return i === p.length - 1 && s.length > i
    if (i >= s.length) return false
    if (token !== '*' && token !== s[i]) return false
  }
  return p.length === s.length
}
