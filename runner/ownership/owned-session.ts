import type { Logger } from 'pino'
import type { SessionRecord, SessionRegistry, Versioned } from '../../state/mod.ts'
import { isLiveOnly } from '../../contract/mod.ts'
import { stamp, stampLive, type EventDraft } from '../event-draft.ts'
import { Session, type SessionDeps } from '../session/session.ts'
import type { RunnerWaf } from '../../waf/mod.ts'
import type { EventSink } from './event-sink.ts'
import { markBusy, markIdle, setQueue } from './record.ts'
import { RecordWriter } from './record-writer.ts'

/** What every owned session is made with. */
export interface OwnedSessionDeps {
  /** For its Session, but the callbacks the owned session wires itself. */
  session: Pick<SessionDeps, 'markers' | 'settings' | 'log' | 'guard'>
  waf: RunnerWaf | undefined
  registry: SessionRegistry
  runnerId: string
  log: Logger
  /** Whether the runner's lease surely stands now (runner/lease.ts). */
  leaseHolds(): boolean
  /** Where its events go: the event log, live-only ones the bus. */
  events: EventSink
  /** The idle reaper ended the session's CLI and nothing runs: the runner may hand it back. */
  onReaped(owned: OwnedSession): void
  /** A record write found another owner. */
  onTakenOver(owned: OwnedSession): void
}

/**
 * A session this runner owns: its live Session, its registry record (written
 * in order as turns start, wait and end), and the sequence of its events,
 * which continues the one the event log had when it was claimed.
 */
export class OwnedSession {
  readonly id: string
  readonly record: RecordWriter
  readonly session: Session
  readonly #deps: OwnedSessionDeps
  #lastSeq: number
  /** Ended here without being handed back (fenced, or taken over): its record is no longer this runner's to write. */
  #dropped = false
  /** No longer owned here: another owner numbers and tells its events. */
  #released = false

  constructor(id: string, record: Versioned<SessionRecord>, lastSeq: number, deps: OwnedSessionDeps) {
    this.id = id
    this.#deps = deps
    this.#lastSeq = lastSeq
    this.record = new RecordWriter(record, { registry: deps.registry, runnerId: deps.runnerId, log: deps.log, onTakenOver: () => deps.onTakenOver(this) })
    // The record's queue is read when its write runs, so it is the current one.
    this.session = new Session(id, {
      ...deps.session,
      emit: (draft) => this.emit(draft),
      waf: deps.waf?.forSession(id),
      initialStats: record.value.stats,
      recordedEngine: record.value.engine,
      onTurnStarted: (turn) => this.record.write((next) => markBusy(next, turn, this.session.queued)),
      onTurnEnded: (stats) => this.record.write((next) => markIdle(next, this.session.queued, stats)),
      onQueued: () => this.record.write((next) => setQueue(next, this.session.queued)),
      onReaped: () => deps.onReaped(this),
    })
  }

  /** The last sequence given to one of its events. */
  get lastSeq(): number {
    return this.#lastSeq
  }

  get dropped(): boolean {
    return this.#dropped
  }

  /** Asked before each try to store one of its events: not once it was dropped here, or the lease may have lapsed. */
  readonly publishable = (): boolean => !this.#dropped && this.#deps.leaseHolds()

  /** Numbers the event and stores it (a live-only one goes unnumbered), while the session is this runner's. */
  emit(draft: EventDraft): void {
    // Checked here, not only by the fence timer: a runner thawed after a freeze reads its CLIs' output
    // before its timers run, and another runner may own these sessions by now (holds() fences at once).
    if (!this.#deps.leaseHolds()) return
    // A session taken over by another runner: its sequence is theirs now, and so is telling the clients.
    if (this.#released) return
    if (isLiveOnly(draft)) {
      if (this.publishable()) this.#deps.events.live(stampLive(draft, this.id))
      return
    }
    this.#deps.events.append(stamp(draft, this.id, ++this.#lastSeq), this.publishable)
  }

  /** The runner gave it up: its events are not this runner's to number any more. */
  release(): void {
    this.#released = true
  }

  /** Ends its work here without touching the registry (it is not this runner's any more). */
  drop(): void {
    this.#dropped = true
    this.record.stop()
    // No interrupt first: the lease may lapse soon, and the CLI must be gone before then.
    this.session
      .close({ interrupt: false })
      .catch((err: unknown) => this.#deps.log.error({ err, session_id: this.id }, 'cannot end a session taken over by another runner'))
  }
}
