import type { Logger } from 'pino'
import type { Bus, BusMessage, Subscription } from '../bus/mod.ts'
import { Command, errorReply, okReply, RUNNER_HEADER, ServiceError, subjects, toServiceError, type Subjects } from '../contract/mod.ts'
import type { State } from '../state/mod.ts'
import { MarkerStore } from './cli-session.ts'
import { expired, lateBy, pastDeadline } from './deadline.ts'
import { stamp } from './event-draft.ts'
import { LeaseKeeper } from './lease.ts'
import { dangerBlock, type RunnerObserver } from './observer.ts'
import { EventSink } from './ownership/event-sink.ts'
import { NotOwnerError } from './ownership/not-owner.ts'
import { OwnedSessions } from './ownership/owned-sessions.ts'
import { Placement } from './placement.ts'
import { Guardian } from './process/guardian.ts'
import type { SessionSettings } from './session/session.ts'
import { RunnerWaf } from '../waf/mod.ts'
import type { WafConfig } from '../waf/mod.ts'

export interface RunnerOptions {
  bus: Bus
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
  /**
   * The one session this runner may serve (a sandbox pod the controller placed it on, with a
   * credential for that session only): it never joins the placement group, and other sessions'
   * commands are refused.
   */
  onlySession?: string | undefined
}

/**
 * Serves session commands: those of sessions it owns on its own subject, new
 * or orphaned ones from the placement queue group while it has room. Each
 * owned session has a Session (and its CLI process) here; its events go to the
 * event log with a per-session sequence that continues across owners.
 */
export class Runner {
  readonly #options: RunnerOptions
  readonly #subjects: Subjects
  readonly #lease: LeaseKeeper
  readonly #sessions: OwnedSessions
  readonly #placement: Placement
  readonly #guardian: Guardian
  readonly #waf: RunnerWaf | undefined
  readonly #events: EventSink
  /** The publish guard of events of no session held here (a stop for an unowned session). */
  readonly #leaseHolds = (): boolean => this.#lease.holds()
  #subscriptions: Subscription[] = []
  #draining = false

  constructor(options: RunnerOptions) {
    const { bus, state, runnerId, maxSessions, observer, log } = options
    this.#options = options
    this.#subjects = subjects(options.subjectPrefix)
    if (options.waf?.enabled) {
      const home = options.settings.engines.default.env.HOME ?? process.env.HOME
      const onBlock = observer && ((...blocked: Parameters<typeof dangerBlock>) => observer.dangerBlocked(dangerBlock(...blocked)))
      this.#waf = new RunnerWaf({ config: options.waf, home, onBlock, log: log.child({ component: 'waf' }) })
    }
    this.#guardian = new Guardian(options.settings.stopGraceMs)
    this.#events = new EventSink({ events: state.events, bus, subjects: this.#subjects, observer })
    this.#lease = new LeaseKeeper({
      leases: state.leases,
      runnerId,
      maxSessions,
      ttlMs: options.leaseTtlMs,
      sessions: () => this.#sessions.size,
      onLost: () => this.#sessions.fence(),
      onRenewed: () => this.#sessions.reclaimFenced(),
      fences: options.soleRunner !== true,
      log,
    })
    this.#sessions = new OwnedSessions({
      bus,
      subjectPrefix: options.subjectPrefix,
      state,
      lease: this.#lease,
      runnerId,
      maxSessions,
      session: { markers: new MarkerStore(options.markerDir), settings: options.settings, log, guard: this.#guardian },
      waf: this.#waf,
      log,
      events: this.#events,
      onCountChanged: () => this.#updatePlacement(),
    })
    this.#placement = new Placement(bus, this.#subjects.place, (msg) => void this.#handle(msg))
  }

  get id(): string {
    return this.#options.runnerId
  }

  /** Sessions with a turn running or queued; a graceful shutdown waits for them (service/shutdown.ts). */
  get busySessions(): number {
    return this.#sessions.busy
  }

  async start(): Promise<void> {
    const { bus } = this.#options
    await this.#lease.start()
    this.#guardian.start()
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
    for (const sub of this.#subscriptions) sub.unsubscribe()
    this.#subscriptions = []
    const closed = this.#sessions.close()
    this.#placement.update(false)
    await closed
    await this.#waf?.close()
    await this.#guardian.close()
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
      this.#options.log.warn(
        { command: command.type, ...('session_id' in command && { session_id: command.session_id }), late_ms: lateBy(command) },
        'command arrived after its deadline; dropped',
      )
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
      const owner = error instanceof NotOwnerError ? error.owner : undefined
      msg.respond(errorReply(error.toBody()), owner ? { [RUNNER_HEADER]: owner } : headers)
    }
  }

  async #run(command: Command): Promise<string> {
    switch (command.type) {
      case 'version': {
        const { engines } = this.#options.settings
        const named =
          command.engine ?? (command.session_id === undefined ? undefined : (await this.#options.state.registry.get(command.session_id))?.value.engine)
        const slot = engines.get(named)
        const version = await slot.engine.version()
        // Asked about no engine nor session (a client's plain `version`, the gateway's readiness): how every engine answers, too.
        const all = command.engine === undefined && command.session_id === undefined
        return okReply('version', { version, engine: slot.name, engine_type: slot.type, ...(all && { engines: await engines.status() }) })
      }
      case 'ping':
        return okReply('ping', { runner: this.id })
    }
    const sessionId = command.session_id
    const only = this.#options.onlySession
    if (only !== undefined && sessionId !== only) throw new ServiceError('SESSION_NOT_FOUND', `runner ${this.id} serves session ${only} only`)
    // An engine nobody configured is refused before anything is claimed or created for the session.
    if (command.type === 'execute' && command.engine !== undefined) this.#options.settings.engines.get(command.engine)
    // Not served here yet: claim it. The registry decides, whichever subject the command came on (it may
    // name this runner as the owner of a session it does not hold in memory, e.g. after a restart).
    const owned = this.#sessions.get(sessionId) ?? (await this.#sessions.acquire(sessionId, command.type === 'execute'))
    switch (command.type) {
      case 'execute': {
        // Claiming may have taken a while; the session checks once more as it queues the prompt.
        if (pastDeadline(command)) throw expired(command)
        // Read before the prompt is queued: the turn's first event can only come after this.
        const afterSeq = owned!.lastSeq
        const admitted = await owned!.session.execute(command)
        // Fenced or taken over while the prompt was admitted: nobody would tell its end.
        if (owned!.dropped) throw new ServiceError('RUNNER_UNAVAILABLE', `runner ${this.id} gave session ${sessionId} up; send the prompt again`)
        return okReply('execute', { ...admitted, after_seq: afterSeq })
      }
      case 'stop': {
        if (owned) return okReply('stop', await owned.session.stop(command.reason, command.request_id))
        // Nothing runs anywhere for it, but the client still learns it is stopped.
        const seq = (await this.#options.state.events.lastSeq(sessionId)) + 1
        const stopped = {
          event: 'stopped' as const,
          ...(command.reason !== undefined && { data: command.reason }),
          ...(command.request_id !== undefined && { request_id: command.request_id }),
        }
        this.#events.append(stamp(stopped, sessionId, seq), this.#leaseHolds)
        return okReply('stop', { stopped: false })
      }
      case 'close': {
        if (!owned) return okReply('close', { closed: false })
        await owned.session.close()
        this.#sessions.forget(owned)
        await owned.record.settled
        await this.#options.state.registry.delete(sessionId)
        return okReply('close', { closed: true })
      }
      case 'stats':
        if (!owned) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`)
        return okReply('stats', { stats: owned.session.stats, busy: owned.session.busy })
      case 'recover':
        return okReply('recover', { recovered: owned !== undefined })
      case 'reply':
        if (!owned) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`)
        owned.session.reply(command.reply, command.by)
        return okReply('reply', { resolved: true })
      case 'pending':
        if (!owned) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`)
        return okReply('pending', owned.session.pending())
    }
  }

  /** Joins the placement group while there is room, leaves it when full. */
  #updatePlacement(): void {
    this.#placement.update(
      this.#options.onlySession === undefined && !this.#sessions.closing && !this.#draining && this.#sessions.size < this.#options.maxSessions,
    )
  }
}
