import type { Bus } from '../../bus/mod.ts'
import { ServiceError } from '../../contract/mod.ts'
import { isRunnerAlive, unfinishedTurns, type RecordedTurn, type SessionRecord, type State, type Versioned } from '../../state/mod.ts'
import { cliSessionId } from '../cli-session.ts'
import { claimSession } from './claim.ts'
import { FencedSessions } from './fencing.ts'
import { NotOwnerError } from './not-owner.ts'
import { OwnedSession, type OwnedSessionDeps } from './owned-session.ts'
import { markIdle, newRecord } from './record.ts'

/** The runner's lease, as claims need it (runner/lease.ts). */
export interface LeaseStatus {
  /** False from a fence until a renewal goes through again. */
  readonly standing: boolean
  holds(): boolean
}

export interface OwnedSessionsOptions extends Omit<OwnedSessionDeps, 'leaseHolds' | 'onReaped' | 'onTakenOver' | 'registry'> {
  bus: Bus
  subjectPrefix: string
  state: State
  lease: LeaseStatus
  /** Sessions this runner owns at most. */
  maxSessions: number
  /** The number of sessions owned here changed (the runner's placement follows it). */
  onCountChanged(): void
}

/**
 * The sessions this runner owns: claimed through the registry (one claim at a
 * time per session), adopted (the turns a dead owner or a fence left
 * unfinished end with RUNNER_LOST), handed back when idle or at shutdown,
 * dropped when fenced or taken over, and taken back after a fence.
 */
export class OwnedSessions {
  readonly #options: OwnedSessionsOptions
  readonly #deps: OwnedSessionDeps
  readonly #owned = new Map<string, OwnedSession>()
  /** Claims in progress, by session and by whether they may create the session. */
  readonly #acquiring = new Map<string, Promise<OwnedSession | undefined>>()
  readonly #fenced: FencedSessions
  #closing = false

  constructor(options: OwnedSessionsOptions) {
    this.#options = options
    this.#fenced = new FencedSessions(options.log)
    this.#deps = {
      session: options.session,
      waf: options.waf,
      registry: options.state.registry,
      runnerId: options.runnerId,
      log: options.log,
      events: options.events,
      leaseHolds: () => options.lease.holds(),
      onReaped: (owned) => {
        if (this.#owned.get(owned.id) !== owned) return
        // Nothing runs: hand the session back, any runner may take it next time.
        this.forget(owned)
        owned.record.write((record) => delete record.owner)
      },
      onTakenOver: (owned) => this.#drop(owned),
    }
  }

  get size(): number {
    return this.#owned.size
  }

  get closing(): boolean {
    return this.#closing
  }

  get(sessionId: string): OwnedSession | undefined {
    return this.#owned.get(sessionId)
  }

  /** Sessions with a turn running or queued. */
  get busy(): number {
    let busy = 0
    for (const { session } of this.#owned.values()) if (session.busy) busy++
    return busy
  }

  /** Claims the session (one claim at a time per session) and starts serving it here; undefined when it does not exist and `create` is false. */
  acquire(sessionId: string, create: boolean): Promise<OwnedSession | undefined> {
    const key = `${create ? '+' : '?'}${sessionId}`
    let pending = this.#acquiring.get(key)
    if (!pending) {
      pending = this.#claim(sessionId, create).finally(() => this.#acquiring.delete(key))
      this.#acquiring.set(key, pending)
    }
    return pending
  }

  /** The session is no longer this runner's. */
  forget(owned: OwnedSession): void {
    if (this.#owned.get(owned.id) !== owned) return
    this.#owned.delete(owned.id)
    owned.release()
    this.#options.onCountChanged()
  }

  /** Claims nothing more; ends every session's processes and hands the sessions back, so another runner takes them at once, not after the lease expires. */
  async close(): Promise<void> {
    this.#closing = true
    await Promise.all(
      [...this.#owned.values()].map(async (owned) => {
        await owned.session.close()
        owned.record.write((record) => {
          delete record.owner
          markIdle(record)
        })
        await owned.record.settled
      }),
    )
    for (const owned of this.#owned.values()) owned.release()
    this.#owned.clear()
  }

  /** The lease may lapse: others may own these sessions soon, so stop running them. */
  fence(): void {
    this.#options.log.error({ sessions: this.#owned.size }, 'runner lease lost; ending every session here')
    for (const owned of [...this.#owned.values()]) {
      this.#fenced.add(owned.id, { turns: owned.session.turns, lastSeq: owned.lastSeq })
      this.#drop(owned)
    }
  }

  /** The lease stands again after a fence: takes back the fenced sessions whose record still names this runner, and ends the turns the fence cut short. */
  reclaimFenced(): void {
    if (this.#closing) return
    this.#fenced.reclaimAll(
      async (sessionId, fenced) => {
        const { registry } = this.#options.state
        const current = await registry.get(sessionId)
        if (current?.value.owner !== this.#options.runnerId || this.#owned.has(sessionId)) return
        if (this.#owned.size >= this.#options.maxSessions)
          throw new ServiceError('OVERLOADED', `runner ${this.#options.runnerId} has no room to take session ${sessionId} back`)
        await this.#adopt(sessionId, current, fenced.turns, this.#options.runnerId, fenced.lastSeq)
      },
      (sessionId) => this.#owned.has(sessionId),
    )
  }

  async #claim(sessionId: string, create: boolean): Promise<OwnedSession | undefined> {
    const { runnerId, bus, subjectPrefix, state, lease, maxSessions } = this.#options
    if (this.#closing) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${runnerId} is shutting down`)
    // Fenced: until a renewal goes through, another runner may take what this one would claim.
    if (!lease.standing) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${runnerId} cannot renew its lease; retry`)
    if (this.#owned.size >= maxSessions) throw new ServiceError('OVERLOADED', `runner ${runnerId} has no room for another session`)
    const fresh = create ? () => newRecord(sessionId, cliSessionId(this.#options.session.settings.namespace, sessionId)) : undefined
    const claim = await claimSession(
      { registry: state.registry, isAlive: (owner) => isRunnerAlive(bus, subjectPrefix, state.leases, owner) },
      sessionId,
      runnerId,
      fresh,
    )
    // A concurrent claim here (an execute beside a stop) may have finished first: one Session per session.
    const existing = this.#owned.get(sessionId)
    if (existing) return existing
    if (claim.kind === 'absent') return undefined
    if (claim.kind === 'owned') throw new NotOwnerError(sessionId, claim.owner)
    // A turn the record says runs, but nothing here runs it: its runner died (or this one
    // restarted under the same id). Either way that turn is over.
    const recorded = claim.record.value
    const lost = claim.takenFrom ?? (recorded.state === 'busy' ? recorded : undefined)
    // A fence here cut short the turns it remembers (queued ones too), unless another runner took the session meanwhile.
    const fenced = this.#fenced.take(sessionId, claim.ours === true)
    if (fenced) return this.#adopt(sessionId, claim.record, fenced.turns, runnerId, fenced.lastSeq)
    return this.#adopt(sessionId, claim.record, lost ? unfinishedTurns(lost) : [], lost?.owner)
  }

  /**
   * Serves a claimed session here; the turns `lostOwner` left unfinished end with RUNNER_LOST for
   * whoever follows them. `usedSeq`: a sequence this runner used already (events it published may
   * not be in the log yet).
   */
  async #adopt(
    sessionId: string,
    record: Versioned<SessionRecord>,
    lostTurns: RecordedTurn[],
    lostOwner: string | undefined,
    usedSeq = 0,
  ): Promise<OwnedSession> {
    // Always from the log: while it was not ours, another runner may have gone on with it.
    const lastSeq = await this.#options.state.events.lastSeq(sessionId)
    // A concurrent claim of the same session got here first: one Session, one sequence.
    const raced = this.#owned.get(sessionId)
    if (raced) return raced
    if (this.#closing) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${this.#options.runnerId} is shutting down`)
    const owned = new OwnedSession(sessionId, record, Math.max(lastSeq, usedSeq), this.#deps)
    this.#owned.set(sessionId, owned)
    this.#options.onCountChanged()
    if (lostTurns.length > 0) {
      const message = `the runner running this turn (${lostOwner}) stopped answering; send the prompt again to continue the conversation`
      for (const turn of lostTurns) {
        owned.emit({
          event: 'error',
          turn_id: turn.turn_id,
          ...(turn.request_id !== undefined && { request_id: turn.request_id }),
          data: message,
          error: { code: 'RUNNER_LOST', message },
        })
      }
      owned.record.write((next) => {
        markIdle(next)
        next.stats.errors += lostTurns.length
      })
    }
    this.#options.log.info({ session_id: sessionId, taken_from: lostOwner }, 'session claimed')
    return owned
  }

  /** Ends a session's work here without touching the registry (it is not ours any more). */
  #drop(owned: OwnedSession): void {
    this.forget(owned)
    owned.drop()
  }
}
