import type { Logger } from 'pino'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Bus, BusMessage, Subscription } from '../bus/mod.ts'
import {
  Command,
  emptyStats,
  errorReply,
  okReply,
  RUNNER_HEADER,
  ServiceError,
  subjects,
  toServiceError,
  type ServiceEvent,
  type Subjects,
} from '../contract/mod.ts'
import { isRunnerAlive, RegistryConflictError, unfinishedTurns, type RecordedTurn, type SessionRecord, type State, type Versioned } from '../state/mod.ts'
import { cliSessionId, MarkerStore } from './cli-session.ts'
import type { Engine } from './engine/engine.ts'
import { LeaseKeeper } from './lease.ts'
import { Guardian } from './process/guardian.ts'
import { claimSession } from './ownership.ts'
import { expired, lateBy, pastDeadline } from './deadline.ts'
import { Session, type EventDraft, type SessionSettings } from './session.ts'
import { dangerBlock, type RunnerObserver } from './observer.ts'
import { RunnerWaf } from './waf/guard.ts'
import type { WafConfig } from './waf/rules.ts'

export interface RunnerOptions {
  bus: Bus
  engine: Engine
  state: State
  runnerId: string
  /** Sessions this runner owns at most; with that many it leaves the placement group. */
  maxSessions: number
  leaseTtlMs: number
  /** The only runner on its state (dev mode): nobody can take its sessions over, so it never fences itself. */
  soleRunner?: boolean | undefined
  subjectPrefix: string
  markerDir: string
  settings: SessionSettings
  log: Logger
  /** The `waf` config section; the WAF is off when it is missing or disabled. */
  waf?: WafConfig | undefined
  /** Told every command, event and WAF block (metrics, traces: runner/observer.ts). */
  observer?: RunnerObserver | undefined
}

/** What a fence cut short in a session: its turns, and the last sequence this runner gave its events. */
interface Fenced {
  turns: RecordedTurn[]
  lastSeq: number
}

/** A session this runner owns: the live Session and its registry record. */
interface Owned {
  session: Session
  record: Versioned<SessionRecord>
  /** Registry writes for the session, one after another. */
  writes: Promise<void>
  /** Ended here without being handed back (fenced, or taken over): its record is no longer this runner's to write. */
  dropped?: boolean
  /** Asked before each try to store one of its events: not once it was dropped here, or the lease may have lapsed. */
  publishable(): boolean
}

/** Registry writes that fail for another reason than a conflict are tried again this often, this far apart (growing). */
const WRITE_RETRIES = 3
const WRITE_RETRY_MS = 250

/**
 * Serves session commands: those of sessions it owns on its own subject, new
 * or orphaned ones from the placement queue group while it has room. Each
 * owned session has a Session (and its CLI process) here; its events go to the
 * event log with a per-session sequence that continues across owners.
 */
export class Runner {
  readonly #options: RunnerOptions
  readonly #subjects: Subjects
  readonly #markers: MarkerStore
  readonly #owned = new Map<string, Owned>()
  /** Claims in progress, by session and by whether they may create the session. */
  readonly #acquiring = new Map<string, Promise<Owned | undefined>>()
  /** The last sequence of each session this runner owns (read from the event log when it claims one). */
  readonly #sequences = new Map<string, number>()
  /** Sessions a fence ended here: the turns it cut short and the last sequence used; taken back once the lease is renewed (#reclaimFenced). */
  readonly #fenced = new Map<string, Fenced>()
  readonly #waf: RunnerWaf | undefined
  readonly #lease: LeaseKeeper
  /** The publish guard of events of no session held here (a stop for an unowned session). */
  readonly #leaseHolds = (): boolean => this.#lease.holds()
  #guardian: Guardian | undefined
  #subscriptions: Subscription[] = []
  #placement: Subscription | undefined
  #closing = false
  #draining = false

  constructor(options: RunnerOptions) {
    this.#options = options
    this.#subjects = subjects(options.subjectPrefix)
    this.#markers = new MarkerStore(options.markerDir)
    if (options.waf?.enabled) {
      const home = options.settings.engineEnv.HOME ?? process.env.HOME
      const { observer } = options
      const onBlock = observer && ((...blocked: Parameters<typeof dangerBlock>) => observer.dangerBlocked(dangerBlock(...blocked)))
      this.#waf = new RunnerWaf({ config: options.waf, home, onBlock, log: options.log.child({ component: 'waf' }) })
    }
    this.#lease = new LeaseKeeper({
      leases: options.state.leases,
      runnerId: options.runnerId,
      maxSessions: options.maxSessions,
      ttlMs: options.leaseTtlMs,
      sessions: () => this.#owned.size,
      onLost: () => this.#fence(),
      onRenewed: () => this.#reclaimFenced(),
      fences: options.soleRunner !== true,
      log: options.log,
    })
  }

  get id(): string {
    return this.#options.runnerId
  }

  /** Sessions with a turn running or queued; a graceful shutdown waits for them (service/shutdown.ts). */
  get busySessions(): number {
    let busy = 0
    for (const { session } of this.#owned.values()) if (session.busy) busy++
    return busy
  }

  async start(): Promise<void> {
    const { bus } = this.#options
    await this.#lease.start()
    this.#guardian = new Guardian(this.#options.settings.stopGraceMs)
    this.#subscriptions = [
      bus.subscribe(this.#subjects.runner(this.id), (msg) => void this.#handle(msg)),
      bus.subscribe(this.#subjects.control, (msg) => void this.#handle(msg), { queue: 'runners' }),
    ]
    this.#updatePlacement()
    await bus.flush()
  }

  /** Takes no new sessions (leaves the placement group); the ones it owns are still served. */
  drain(): void {
    this.#draining = true
    this.#updatePlacement()
  }

  /** Stops serving, ends every session's processes and hands the sessions back, releases the lease. */
  async close(): Promise<void> {
    this.#closing = true
    for (const sub of this.#subscriptions) sub.unsubscribe()
    this.#placement?.unsubscribe()
    this.#subscriptions = []
    this.#placement = undefined
    await Promise.all(
      [...this.#owned.values()].map(async (owned) => {
        await owned.session.close()
        // Hand the session back so another runner takes it at once, not after the lease expires.
        this.#write(owned, (record) => {
          delete record.owner
          record.state = 'idle'
          delete record.turn_id
          delete record.turn_request_id
          delete record.queued
        })
        await owned.writes
      }),
    )
    this.#owned.clear()
    this.#sequences.clear()
    await this.#waf?.close()
    await this.#guardian?.close()
    await this.#lease.stop()
  }

  async #handle(msg: BusMessage): Promise<void> {
    let command: Command
    try {
      command = Command.parse(JSON.parse(msg.data))
    } catch (err) {
      msg.respond(errorReply({ code: 'BAD_REQUEST', message: `runner: malformed command: ${(err as Error).message}` }))
      return
    }
    this.#options.observer?.command(command, msg.headers)
    const headers = { [RUNNER_HEADER]: this.id }
    if (pastDeadline(command)) {
      // The gateway gave up on it and told its client so: doing it now would surprise everyone.
      this.#options.log.warn({ command: command.type, ...('session_id' in command && { session_id: command.session_id }), late_ms: lateBy(command) }, 'command arrived after its deadline; dropped')
      msg.respond(errorReply(expired(command).toBody()), headers)
      return
    }
    try {
      msg.respond(await this.#run(command), headers)
    } catch (err) {
      const error = toServiceError(err)
      this.#options.observer?.commandFailed(command, error.toBody())
      if (error.code === 'INTERNAL') this.#options.log.error({ err, command: command.type }, 'command failed')
      // A NOT_OWNER answer names the owner, so the gateway can go there directly.
      const owner = error.code === 'NOT_OWNER' ? (error.cause as { owner?: string } | undefined)?.owner : undefined
      msg.respond(errorReply(error.toBody()), owner ? { [RUNNER_HEADER]: owner } : headers)
    }
  }

  async #run(command: Command): Promise<string> {
    switch (command.type) {
      case 'version':
        return okReply('version', { version: await this.#options.engine.version(), engine: this.#options.engine.name })
      case 'ping':
        return okReply('ping', { runner: this.id })
    }
    const sessionId = command.session_id
    // Not served here yet: claim it. The registry decides, whichever subject the command came on (it may
    // name this runner as the owner of a session it does not hold in memory, e.g. after a restart).
    const owned = this.#owned.get(sessionId) ?? (await this.#acquire(sessionId, command.type === 'execute'))
    switch (command.type) {
      case 'execute': {
        // Claiming may have taken a while; the session checks once more as it queues the prompt.
        if (pastDeadline(command)) throw expired(command)
        // Read before the prompt is queued: the turn's first event can only come after this.
        const afterSeq = this.#sequences.get(sessionId) ?? 0
        const admitted = await owned!.session.execute(command)
        // Fenced or taken over while the prompt was admitted: nobody would tell its end.
        if (owned!.dropped) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${this.id} gave session ${sessionId} up; send the prompt again`)
        return okReply('execute', { ...admitted, after_seq: afterSeq })
      }
      case 'stop': {
        if (owned) return okReply('stop', await owned.session.stop(command.reason, command.request_id))
        // Nothing runs anywhere for it, but the client still learns it is stopped.
        const seq = (await this.#options.state.events.lastSeq(sessionId)) + 1
        this.#publish({ event: 'stopped', ...(command.reason !== undefined && { data: command.reason }), ...(command.request_id !== undefined && { request_id: command.request_id }) }, sessionId, seq, this.#leaseHolds)
        return okReply('stop', { stopped: false })
      }
      case 'close': {
        if (!owned) return okReply('close', { closed: false })
        await owned.session.close()
        this.#forget(sessionId, owned)
        await owned.writes
        await this.#options.state.registry.delete(sessionId)
        return okReply('close', { closed: true })
      }
      case 'stats':
        if (!owned) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`)
        return okReply('stats', { stats: owned.session.stats, busy: owned.session.busy })
      case 'recover':
        return okReply('recover', { recovered: owned !== undefined })
    }
  }

  /** Claims the session (one claim at a time per session) and starts serving it here. */
  #acquire(sessionId: string, create: boolean): Promise<Owned | undefined> {
    const key = `${create ? '+' : '?'}${sessionId}`
    let pending = this.#acquiring.get(key)
    if (!pending) {
      pending = this.#claim(sessionId, create).finally(() => this.#acquiring.delete(key))
      this.#acquiring.set(key, pending)
    }
    return pending
  }

  async #claim(sessionId: string, create: boolean): Promise<Owned | undefined> {
    if (this.#closing) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${this.id} is shutting down`)
    // Fenced: until a renewal goes through, another runner may take what this one would claim.
    if (!this.#lease.standing) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${this.id} cannot renew its lease; retry`)
    if (this.#owned.size >= this.#options.maxSessions) {
      throw new ServiceError('OVERLOADED', `runner ${this.id} has no room for another session`)
    }
    const { registry } = this.#options.state
    const { bus, subjectPrefix, state } = this.#options
    const claim = await claimSession({ registry, isAlive: (runnerId) => isRunnerAlive(bus, subjectPrefix, state.leases, runnerId) }, sessionId, this.id, create ? () => this.#freshRecord(sessionId) : undefined)
    // A concurrent claim here (an execute beside a stop) may have finished first: one Session per session.
    const existing = this.#owned.get(sessionId)
    if (existing) return existing
    if (claim.kind === 'absent') return undefined
    if (claim.kind === 'owned') {
      throw new ServiceError('NOT_OWNER', `session ${sessionId} is owned by runner ${claim.owner}`, { cause: { owner: claim.owner } })
    }
    // A turn the record says runs, but nothing here runs it: its runner died (or this one
    // restarted under the same id). Either way that turn is over.
    const recorded = claim.record.value
    const lost = claim.takenFrom ?? (recorded.state === 'busy' ? recorded : undefined)
    // A fence here cut short the turns it remembers (queued ones too), unless another runner took the session meanwhile.
    const fenced = claim.ours ? this.#fenced.get(sessionId) : undefined
    this.#fenced.delete(sessionId)
    if (fenced) return this.#adopt(sessionId, claim.record, fenced.turns, this.id, fenced.lastSeq)
    return this.#adopt(sessionId, claim.record, lost ? unfinishedTurns(lost) : [], lost?.owner)
  }

  /**
   * Serves a claimed session here; the turns `lostOwner` left unfinished end with RUNNER_LOST for
   * whoever follows them. `usedSeq`: a sequence this runner used already (events it published may
   * not be in the log yet).
   */
  async #adopt(sessionId: string, record: Versioned<SessionRecord>, lostTurns: RecordedTurn[], lostOwner: string | undefined, usedSeq = 0): Promise<Owned> {
    // Always from the log: while it was not ours, another runner may have gone on with it.
    const lastSeq = await this.#options.state.events.lastSeq(sessionId)
    // A concurrent claim of the same session got here first: one Session, one sequence.
    const raced = this.#owned.get(sessionId)
    if (raced) return raced
    if (this.#closing) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${this.id} is shutting down`)
    this.#sequences.set(sessionId, Math.max(lastSeq, usedSeq))
    const owned: Owned = { record, writes: Promise.resolve(), session: undefined as unknown as Session, publishable: () => !owned.dropped && this.#lease.holds() }
    owned.session = this.#newSession(sessionId, owned)
    this.#owned.set(sessionId, owned)
    this.#updatePlacement()
    if (lostTurns.length > 0) {
      const message = `the runner running this turn (${lostOwner}) stopped answering; send the prompt again to continue the conversation`
      for (const turn of lostTurns) {
        this.#emit(sessionId, {
          event: 'error',
          turn_id: turn.turn_id,
          ...(turn.request_id !== undefined && { request_id: turn.request_id }),
          data: message,
          error: { code: 'RUNNER_LOST', message },
        })
      }
      this.#write(owned, (next) => {
        next.state = 'idle'
        delete next.turn_id
        delete next.turn_request_id
        delete next.queued
        next.stats.errors += lostTurns.length
      })
    }
    this.#options.log.info({ session_id: sessionId, taken_from: lostOwner }, 'session claimed')
    return owned
  }

  #newSession(sessionId: string, owned: Owned): Session {
    const { engine, settings, log } = this.#options
    return new Session(sessionId, {
      engine,
      markers: this.#markers,
      settings,
      log,
      emit: (draft) => this.#emit(sessionId, draft),
      waf: this.#waf?.forSession(sessionId),
      initialStats: owned.record.value.stats,
      guard: this.#guardian,
      onTurnStarted: (turnId, requestId, workDir) =>
        this.#write(owned, (record) => {
          record.state = 'busy'
          record.turn_id = turnId
          if (workDir !== undefined) record.work_dir = workDir
          if (requestId === undefined) delete record.turn_request_id
          else record.turn_request_id = requestId
          recordQueue(record, owned.session.queued)
        }),
      onTurnEnded: (stats) =>
        this.#write(owned, (record) => {
          record.state = 'idle'
          delete record.turn_id
          delete record.turn_request_id
          recordQueue(record, owned.session.queued)
          record.stats = stats
        }),
      onQueued: () => this.#write(owned, (record) => recordQueue(record, owned.session.queued)),
      onReaped: () => {
        if (owned.session.busy || this.#owned.get(sessionId) !== owned) return
        // Nothing runs: hand the session back, any runner may take it next time.
        this.#forget(sessionId, owned)
        this.#write(owned, (record) => delete record.owner)
      },
    })
  }

  #freshRecord(sessionId: string): SessionRecord {
    const now = Date.now()
    return {
      session_id: sessionId,
      state: 'idle',
      cli_session_id: cliSessionId(this.#options.settings.namespace, sessionId),
      created_at: now,
      last_active: now,
      stats: emptyStats(),
    }
  }

  /** Writes a change to the session's record, in order; losing a race means another runner took the session. */
  #write(owned: Owned, change: (record: SessionRecord) => void): void {
    const { registry } = this.#options.state
    owned.writes = owned.writes.then(async () => {
      if (owned.dropped) return
      const sessionId = owned.session.id
      // Two tries: a write whose answer was lost (a NATS outage) moved the revision under us.
      let failures = 0
      for (let attempt = 0; attempt < 2; attempt++) {
        const next = structuredClone(owned.record.value)
        change(next)
        next.last_active = Date.now()
        try {
          owned.record = { value: next, revision: await registry.update(next, owned.record.revision) }
          return
        } catch (err) {
          if (!(err instanceof RegistryConflictError)) {
            // A NATS hiccup: try again a few times, then give up on this change (the next one carries the state on).
            if (failures++ < WRITE_RETRIES) {
              await sleep(WRITE_RETRY_MS * failures)
              attempt--
              continue
            }
            this.#options.log.error({ err, session_id: sessionId }, 'cannot write the session record')
            return
          }
          const current = await registry.get(sessionId).catch(() => undefined)
          if (current?.value.owner !== this.id) {
            this.#options.log.warn({ session_id: sessionId, owner: current?.value.owner }, 'another runner took the session over; ending it here')
            this.#drop(owned)
            return
          }
          owned.record = current
        }
      }
    })
  }

  /** Ends a session's work here without touching the registry (it is not ours any more). */
  #drop(owned: Owned): void {
    owned.dropped = true
    this.#forget(owned.session.id, owned)
    // No interrupt first: the lease may lapse soon, and the CLI must be gone before then.
    owned.session.close({ interrupt: false }).catch((err: unknown) => this.#options.log.error({ err, session_id: owned.session.id }, 'cannot end a session taken over by another runner'))
  }

  /** The lease may lapse: others may own our sessions soon, so stop running them. */
  #fence(): void {
    this.#options.log.error({ sessions: this.#owned.size }, 'runner lease lost; ending every session here')
    for (const owned of [...this.#owned.values()]) {
      const sessionId = owned.session.id
      const turns = owned.session.turns
      if (turns.length > 0) this.#fenced.set(sessionId, { turns, lastSeq: this.#sequences.get(sessionId) ?? 0 })
      this.#drop(owned)
    }
  }

  /**
   * The lease stands again after a fence. A fenced session whose record still names this runner
   * was not taken over, so nobody told its clients that the fence cut its turns short: take it
   * back and end those turns. One another runner took over is that runner's to tell.
   */
  #reclaimFenced(): void {
    if (this.#closing) return
    for (const [sessionId, fenced] of this.#fenced) {
      this.#fenced.delete(sessionId)
      void this.#reclaim(sessionId, fenced).catch((err: unknown) => {
        // Tried again after the next renewal, unless a claim took the session meanwhile.
        if (!this.#owned.has(sessionId) && !this.#fenced.has(sessionId)) this.#fenced.set(sessionId, fenced)
        this.#options.log.warn({ err, session_id: sessionId }, 'cannot take back a fenced session yet')
      })
    }
  }

  async #reclaim(sessionId: string, fenced: Fenced): Promise<void> {
    const current = await this.#options.state.registry.get(sessionId)
    if (current?.value.owner !== this.id || this.#owned.has(sessionId)) return
    if (this.#owned.size >= this.#options.maxSessions) throw new ServiceError('OVERLOADED', `runner ${this.id} has no room to take session ${sessionId} back`)
    await this.#adopt(sessionId, current, fenced.turns, this.id, fenced.lastSeq)
  }

  /** Joins the placement group while there is room, leaves it when full. */
  #updatePlacement(): void {
    const room = !this.#closing && !this.#draining && this.#owned.size < this.#options.maxSessions
    if (room && !this.#placement) {
      this.#placement = this.#options.bus.subscribe(this.#subjects.place, (msg) => void this.#handle(msg), { queue: 'runners' })
    } else if (!room && this.#placement) {
      this.#placement.unsubscribe()
      this.#placement = undefined
    }
  }

  /** The session is no longer this runner's. */
  #forget(sessionId: string, owned: Owned): void {
    if (this.#owned.get(sessionId) !== owned) return
    this.#owned.delete(sessionId)
    this.#sequences.delete(sessionId)
    this.#updatePlacement()
  }

  #emit(sessionId: string, draft: EventDraft): void {
    // Checked here, not only by the fence timer: a runner thawed after a freeze reads its CLIs' output
    // before its timers run, and another runner may own these sessions by now (holds() fences at once).
    if (!this.#lease.holds()) return
    const last = this.#sequences.get(sessionId)
    // A session taken over by another runner: its sequence is theirs now, and so is telling the clients.
    if (last === undefined) return
    this.#sequences.set(sessionId, last + 1)
    this.#publish(draft, sessionId, last + 1, this.#owned.get(sessionId)?.publishable ?? this.#leaseHolds)
  }

  /** `publishable` is asked before each try to store the event (see Owned). */
  #publish(draft: EventDraft, sessionId: string, seq: number, publishable: () => boolean): void {
    const event = { ...draft, session_id: sessionId, seq, ts: Date.now() } as ServiceEvent & { session_id: string; seq: number }
    this.#options.observer?.event(event)
    this.#options.state.events.append(event, publishable)
  }
}

/** Keeps the record's list of waiting turns as the session has it (read when the write runs, so it is current). */
function recordQueue(record: SessionRecord, queued: RecordedTurn[]): void {
  if (queued.length === 0) delete record.queued
  else record.queued = queued
}
