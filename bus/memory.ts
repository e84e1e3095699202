import {
  BusClosedError,
  BusNoRespondersError,
  BusTimeoutError,
  subjectMatches,
  type Bus,
  type BusMessage,
  type Headers,
  type RequestOptions,
  type SubscribeOptions,
  type Subscription,
} from './bus.ts'

interface Entry {
  pattern: string
  wildcard: boolean
  queue?: string
  handler: (msg: BusMessage) => void
}

const noRespond = () => {}

/** Where a subscriber's failure is reported (a pino logger fits). */
export interface MemoryBusLogger {
  error(obj: object, msg: string): void
}

const consoleLogger: MemoryBusLogger = { error: (obj, msg) => console.error(msg, obj) }

/**
 * The in-process bus of dev mode. Delivery is asynchronous (a microtask), as on
 * a real server, so a publisher never re-enters its own subscriber; per
 * publisher order is kept.
 */
export class MemoryBus implements Bus {
  readonly kind = 'memory'
  #exact = new Map<string, Set<Entry>>()
  #wildcards = new Set<Entry>()
  #queueTurn = new Map<string, number>()
  /** Requests waiting for a reply, so close() can end them. */
  #pending = new Set<(err: Error) => void>()
  #closed = false
  readonly #log: MemoryBusLogger

  constructor(options: { logger?: MemoryBusLogger } = {}) {
    this.#log = options.logger ?? consoleLogger
  }

  publish(subject: string, data: string, headers?: Headers, value?: unknown): void {
    if (this.#closed) throw new BusClosedError()
    this.#deliver(subject, data, headers, noRespond, value)
  }

  subscribe(subject: string, handler: (msg: BusMessage) => void, options: SubscribeOptions = {}): Subscription {
    if (this.#closed) throw new BusClosedError()
    const entry: Entry = { pattern: subject, wildcard: /(^|\.)(\*|>)(\.|$)/.test(subject), handler }
    if (options.queue !== undefined) entry.queue = options.queue
    if (entry.wildcard) this.#wildcards.add(entry)
    else {
      let set = this.#exact.get(subject)
      if (!set) this.#exact.set(subject, (set = new Set()))
      set.add(entry)
    }
    return {
      unsubscribe: () => {
        if (entry.wildcard) this.#wildcards.delete(entry)
        else {
          const set = this.#exact.get(subject)
          set?.delete(entry)
          if (set?.size === 0) this.#exact.delete(subject)
        }
      },
    }
  }

  request(subject: string, data: string, options: RequestOptions): Promise<BusMessage> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new BusClosedError())
      let settled = false
      const fail = (err: Error) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.#pending.delete(fail)
        reject(err)
      }
      const timer = setTimeout(() => fail(new BusTimeoutError(subject, options.timeoutMs)), options.timeoutMs)
      const respond = (reply: string, replyHeaders?: Headers) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.#pending.delete(fail)
        resolve(message(subject, reply, replyHeaders, noRespond))
      }
      this.#pending.add(fail)
      if (!this.#deliver(subject, data, options.headers, respond)) fail(new BusNoRespondersError(subject))
    })
  }

  async flush(): Promise<void> {
    if (this.#closed) throw new BusClosedError()
    await new Promise<void>((resolve) => queueMicrotask(resolve))
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#exact.clear()
    this.#wildcards.clear()
    for (const fail of [...this.#pending]) fail(new BusClosedError())
  }

  /** Returns whether any subscriber received the message. */
  #deliver(subject: string, data: string, headers: Headers | undefined, respond: BusMessage['respond'], value?: unknown): boolean {
    if (this.#closed) return false
    const targets: Entry[] = []
    // Allocated only when a queue group is met: most messages (every event) have plain subscribers only.
    let groups: Map<string, Entry[]> | undefined
    const exact = this.#exact.get(subject)
    const matching = this.#wildcards.size === 0 ? exact : [...(exact ?? []), ...[...this.#wildcards].filter((entry) => subjectMatches(entry.pattern, subject))]
    for (const entry of matching ?? []) {
      if (entry.queue === undefined) targets.push(entry)
      else {
        groups ??= new Map()
        const group = groups.get(entry.queue)
        if (group) group.push(entry)
        else groups.set(entry.queue, [entry])
      }
    }
    for (const [queue, members] of groups ?? []) {
      const turn = this.#queueTurn.get(queue) ?? 0
      this.#queueTurn.set(queue, turn + 1)
      targets.push(members[turn % members.length]!)
    }
    if (targets.length === 0) return false
    const msg = message(subject, data, headers, respond, value)
    queueMicrotask(() => {
      for (const entry of targets) {
        // One failing subscriber must not starve the others, nor its own later messages.
        try {
          entry.handler(msg)
        } catch (err) {
          this.#log.error({ err, subject }, 'bus handler failed')
        }
      }
    })
    return true
  }
}

function message(subject: string, data: string, headers: Headers | undefined, respond: BusMessage['respond'], value?: unknown): BusMessage {
  const msg: { -readonly [K in keyof BusMessage]: BusMessage[K] } = { subject, data, respond }
  if (headers) msg.headers = headers
  if (value !== undefined) msg.value = value
  return msg
}
