import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { RegistryConflictError, type SessionRecord, type SessionRegistry, type Versioned } from '../../state/mod.ts'

/** Registry writes that fail for another reason than a conflict are tried again this often, this far apart (growing). */
const WRITE_RETRIES = 3
const WRITE_RETRY_MS = 250

export interface RecordWriterOptions {
  registry: SessionRegistry
  runnerId: string
  log: Logger
  /** A write found the record names another owner: the session is no longer this runner's. */
  onTakenOver(): void
}

/**
 * Writes the changes to one session's registry record, one after another,
 * each on the newest revision this runner knows. Losing a compare-and-set
 * race to another owner means the session was taken over: nothing more is
 * written, and `onTakenOver` is told.
 */
export class RecordWriter {
  readonly #options: RecordWriterOptions
  #record: Versioned<SessionRecord>
  #writes: Promise<void> = Promise.resolve()
  #stopped = false

  constructor(record: Versioned<SessionRecord>, options: RecordWriterOptions) {
    this.#record = record
    this.#options = options
  }

  /** The record as this runner last wrote or read it. */
  get value(): SessionRecord {
    return this.#record.value
  }

  /** Resolves when every write asked for so far is done. */
  get settled(): Promise<void> {
    return this.#writes
  }

  /** Writes no more (the record is not this runner's to write). */
  stop(): void {
    this.#stopped = true
  }

  /** Applies `change` to the record after the writes before it. */
  write(change: (record: SessionRecord) => void): void {
    this.#writes = this.#writes.then(() => this.#write(change))
  }

  async #write(change: (record: SessionRecord) => void): Promise<void> {
    if (this.#stopped) return
    const { registry, runnerId, log } = this.#options
    const sessionId = this.#record.value.session_id
    // Two tries: a write whose answer was lost (a NATS outage) moved the revision under us.
    let failures = 0
    for (let attempt = 0; attempt < 2; attempt++) {
      const next = structuredClone(this.#record.value)
      change(next)
      next.last_active = Date.now()
      try {
        this.#record = { value: next, revision: await registry.update(next, this.#record.revision) }
        return
      } catch (err) {
        if (!(err instanceof RegistryConflictError)) {
          // A NATS hiccup: try again a few times, then give up on this change (the next one carries the state on).
          if (failures++ < WRITE_RETRIES) {
            await sleep(WRITE_RETRY_MS * failures)
            attempt--
            continue
          }
          log.error({ err, session_id: sessionId }, 'cannot write the session record')
          return
        }
        const current = await registry.get(sessionId).catch(() => undefined)
        if (current?.value.owner !== runnerId) {
          log.warn({ session_id: sessionId, owner: current?.value.owner }, 'another runner took the session over; ending it here')
          this.#options.onTakenOver()
          return
        }
        this.#record = current
      }
    }
  }
}
