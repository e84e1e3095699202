import type { Bus } from '../bus/mod.ts'
import type { ServiceEvent } from '../contract/events.ts'
import { subjects, type Subjects } from '../contract/subjects.ts'
import type { EventLog, StoredEvent } from './event-log.ts'
import {
  RegistryConflictError,
  type RegistryChange,
  type RunnerLease,
  type RunnerLeases,
  type SessionRecord,
  type SessionRegistry,
  type Versioned,
} from './registry.ts'

/** The session registry of dev mode: one process, one map. */
export class MemoryRegistry implements SessionRegistry {
  #records = new Map<string, Versioned<SessionRecord>>()
  #revision = 0
  #watchers = new Set<(change: RegistryChange) => void>()

  async get(sessionId: string): Promise<Versioned<SessionRecord> | undefined> {
    const entry = this.#records.get(sessionId)
    return entry && { value: structuredClone(entry.value), revision: entry.revision }
  }

  async create(record: SessionRecord): Promise<number> {
    if (this.#records.has(record.session_id)) throw new RegistryConflictError(`session ${record.session_id} exists`)
    return this.#put(record)
  }

  async update(record: SessionRecord, revision: number): Promise<number> {
    if (this.#records.get(record.session_id)?.revision !== revision) throw new RegistryConflictError(`session ${record.session_id} changed`)
    return this.#put(record)
  }

  async delete(sessionId: string): Promise<void> {
    if (this.#records.delete(sessionId)) this.#notify({ type: 'delete', session_id: sessionId })
  }

  async list(): Promise<SessionRecord[]> {
    return [...this.#records.values()].map((entry) => structuredClone(entry.value))
  }

  async watch(onChange: (change: RegistryChange) => void): Promise<() => void> {
    this.#watchers.add(onChange)
    return () => this.#watchers.delete(onChange)
  }

  #put(record: SessionRecord): number {
    const revision = ++this.#revision
    this.#records.set(record.session_id, { value: structuredClone(record), revision })
    this.#notify({ type: 'put', record: structuredClone(record) })
    return revision
  }

  #notify(change: RegistryChange): void {
    for (const watcher of this.#watchers) watcher(change)
  }
}

/** Runner leases of dev mode: the one runner never expires. */
export class MemoryLeases implements RunnerLeases {
  #leases = new Map<string, RunnerLease>()
  async renew(lease: RunnerLease): Promise<void> {
    this.#leases.set(lease.runner_id, { ...lease })
  }
  async get(runnerId: string): Promise<RunnerLease | undefined> {
    return this.#leases.get(runnerId)
  }
  async list(): Promise<RunnerLease[]> {
    return [...this.#leases.values()]
  }
  async release(runnerId: string): Promise<void> {
    this.#leases.delete(runnerId)
  }
}

/** One session's retained events: parallel lists, each event as the JSON text it was published as. */
interface Retained {
  seqs: number[]
  texts: string[]
}

/**
 * The event log of dev mode: the last `perSession` events of each session in
 * memory. Each is kept as the text it was published as (already made for the
 * bus), not as an object: a short event's text is a few hundred bytes, its
 * object tree several times that; replay, the only reader, is rare and sends
 * the text on as it is.
 */
export class MemoryEventLog implements EventLog {
  readonly #bus: Bus
  readonly #subjects: Subjects
  readonly #perSession: number
  #events = new Map<string, Retained>()

  constructor(bus: Bus, subjectPrefix: string, perSession: number) {
    this.#bus = bus
    this.#subjects = subjects(subjectPrefix)
    this.#perSession = perSession
  }

  // Stored at once, so `publishable` (asked before retries) has nothing to guard here.
  append(event: ServiceEvent & { session_id: string; seq: number }): void {
    const text = JSON.stringify(event)
    let retained = this.#events.get(event.session_id)
    if (!retained) this.#events.set(event.session_id, (retained = { seqs: [], texts: [] }))
    retained.seqs.push(event.seq)
    retained.texts.push(text)
    // Trim in batches so appends stay O(1) amortized.
    const excess = retained.seqs.length - this.#perSession
    if (excess > this.#perSession * 0.25) {
      retained.seqs.splice(0, excess)
      retained.texts.splice(0, excess)
    }
    // The gateway of this process takes the event as it is instead of parsing the text again.
    this.#bus.publish(this.#subjects.events(event.session_id), text, undefined, event)
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.#events.get(sessionId)?.seqs.at(-1) ?? 0
  }

  async readStored(sessionId: string, afterSeq: number): Promise<StoredEvent[]> {
    const retained = this.#events.get(sessionId)
    if (!retained) return []
    const stored: StoredEvent[] = []
    retained.seqs.forEach((seq, i) => {
      if (seq > afterSeq) stored.push({ seq, json: retained.texts[i]! })
    })
    return stored
  }

  async read(sessionId: string, afterSeq: number): Promise<ServiceEvent[]> {
    // This process wrote each text from an event already checked.
    return (await this.readStored(sessionId, afterSeq)).map(({ json }) => JSON.parse(json) as ServiceEvent)
  }

  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}
