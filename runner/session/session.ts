import type { Logger } from 'pino'
import {
  addStats,
  emptyStats,
  ServiceError,
  toServiceError,
  type CommandOf,
  type ErrorCode,
  type PendingRequests,
  type ReplyOf,
  type RequestId,
  type Stats,
  type SteeringReply,
} from '../../contract/mod.ts'
import type { RecordedTurn } from '../../state/mod.ts'
import { cliSessionId, type MarkerStore } from '../cli-session.ts'
import { expired, pastDeadline } from '../deadline.ts'
import type { EngineSet, EngineSlot } from '../engine/engine-set.ts'
import type { EngineExit, EngineOutput, TurnResult } from '../engine/engine.ts'
import type { EventDraft } from '../event-draft.ts'
import type { ProcessGuard } from '../process/guardian.ts'
import { verifySandbox } from '../sandbox.ts'
import { SteeringDesk } from '../steering/desk.ts'
import type { SessionWaf } from '../../waf/mod.ts'
import { CliProcess } from './cli-process.ts'
import { Conversation } from './conversation.ts'
import { outputEvent } from './output-events.ts'
import { conversationLost, retryAfterExit, retryAfterFailedTurn, type RetryDecision } from './retry.ts'
import { recorded, type ActiveTurn, type StartedTurn, type Turn } from './turn.ts'
import { TurnClock } from './turn-clock.ts'
import { turnStats } from './turn-stats.ts'

export interface SessionSettings {
  namespace: string
  workBase: string
  /** `session.work_dir_roots` (conversation.ts). */
  workDirRoots?: readonly string[] | undefined
  maxQueue: number
  /** Milliseconds; 0 means no limit. */
  turnTimeoutMs: number
  idleTimeoutMs: number
  stopGraceMs: number
  /** The configured engines, each with its environment and kernel sandbox (runner/sandbox-exec). */
  engines: EngineSet
}

export interface SessionDeps {
  markers: MarkerStore
  settings: SessionSettings
  emit(draft: EventDraft): void
  log: Logger
  /** Checks prompts and tool calls (waf); none means no WAF. */
  waf?: SessionWaf | undefined
  /** Stats the session had before this runner took it (from the registry). */
  initialStats?: Stats | undefined
  /** The engine the registry says the session runs (none: not fixed yet, or a session from before engines had names). */
  recordedEngine?: string | undefined
  /** Told when a turn starts and ends, so the registry knows what runs. */
  onTurnStarted?(turn: StartedTurn): void
  onTurnEnded?(stats: Stats): void
  /** A prompt joined the queue behind a running turn. */
  onQueued?(): void
  /** The idle reaper ended the CLI (if one ran) and nothing runs: the session needs nothing from this runner now. */
  onReaped?(): void
  /** Ends the session's processes if the runner dies without doing it. */
  guard?: ProcessGuard | undefined
}

/** A prompt taken into the queue (the runner adds the sequence to the reply). */
type Admitted = Omit<ReplyOf<'execute'>, 'after_seq'>

/**
 * One agent session on this runner: a FIFO of prompts, at most one turn at a
 * time in one long-lived CLI process (the CLI merges prompts written mid-turn),
 * stats summed over turns, a turn time limit and an idle reaper.
 */
export class Session {
  readonly id: string
  readonly #deps: SessionDeps
  readonly #cliSessionId: string
  readonly #conversation: Conversation
  #queue: Turn[] = []
  #turn: ActiveTurn | undefined
  #process: CliProcess | undefined
  /** Set while a CLI process is being started. */
  #spawning: Promise<unknown> | undefined
  #stats: Stats = emptyStats()
  #lastCumulativeCost = 0
  #idleTimer: NodeJS.Timeout | undefined
  /** Admissions of prompts, one at a time (checking work_dir is asynchronous). */
  #admission: Promise<unknown> = Promise.resolve()
  /** Prompts taken but not yet queued: the reaper must not hand the session back under them. */
  #admitting = 0
  /** Lifecycle operations (stop, reap) run one at a time. */
  #lifecycle: Promise<unknown> = Promise.resolve()
  /** Where the session's CLI asks a person (engine.approval: ask); made with its first CLI, kept for the session's life here. */
  #desk: SteeringDesk | undefined

  constructor(id: string, deps: SessionDeps) {
    this.id = id
    this.#deps = deps
    if (deps.initialStats) this.#stats = deps.initialStats
    this.#cliSessionId = cliSessionId(deps.settings.namespace, id)
    this.#conversation = new Conversation({
      sessionId: id,
      cliSessionId: this.#cliSessionId,
      markers: deps.markers,
      workBase: deps.settings.workBase,
      workDirRoots: deps.settings.workDirRoots,
      recordedEngine: deps.recordedEngine,
      log: deps.log,
    })
    // A session claimed for a stop or stats alone is handed back when idle, too.
    this.#armIdleTimer()
  }

  /** A turn runs, waits, or is being admitted. */
  get busy(): boolean {
    return this.#turn !== undefined || this.#queue.length > 0 || this.#admitting > 0
  }

  get stats(): Stats {
    return this.#stats
  }

  /** The turn running and those waiting, oldest first, as the session record names them. */
  get turns(): RecordedTurn[] {
    return [...(this.#turn ? [this.#turn] : []), ...this.#queue].map(recorded)
  }

  /** The turns waiting, oldest first, as the session record names them. */
  get queued(): RecordedTurn[] {
    return this.#queue.map(recorded)
  }

  /** A person's answer to one of the session's permission requests or questions (throws PERMISSION_NOT_FOUND, ALREADY_ANSWERED, BAD_REQUEST). */
  reply(reply: SteeringReply, by: string | undefined): void {
    // No desk: nothing was asked here (approval auto, or the session came from a runner that died with its requests).
    if (!this.#desk) throw new ServiceError('PERMISSION_NOT_FOUND', `no permission request or question ${reply.id} waits in session ${this.id}`)
    this.#desk.reply(reply, by)
  }

  /** The permission requests and questions waiting for a person. */
  pending(): PendingRequests {
    return this.#desk?.pending() ?? { permissions: [], questions: [] }
  }

  /** Queues a prompt; prompts are admitted in the order their commands arrived. */
  execute(command: CommandOf<'execute'>): Promise<Admitted> {
    this.#admitting++
    clearTimeout(this.#idleTimer)
    const admitted = this.#admission
      .then(() => this.#admit(command))
      .finally(() => {
        this.#admitting--
        // A refused prompt leaves the session as idle as it was.
        if (!this.busy) this.#armIdleTimer()
      })
    this.#admission = admitted.catch(() => {})
    return admitted
  }

  async #admit(command: CommandOf<'execute'>): Promise<Admitted> {
    await this.#conversation.useWorkDir(command.work_dir)
    this.#conversation.useEngine(command.engine, this.#deps.settings.engines)
    // Behind other admissions, the gateway may have given up on this one meanwhile.
    if (pastDeadline(command)) throw expired(command)
    if (this.#queue.length >= this.#deps.settings.maxQueue && this.#turn !== undefined) {
      throw new ServiceError('QUEUE_FULL', `session ${this.id} already has ${this.#queue.length} prompts waiting (session.max_queue)`)
    }
    const ahead = this.#queue.length + (this.#turn ? 1 : 0)
    this.#queue.push({ id: command.turn_id, prompt: command.prompt, instructions: command.instructions, requestId: command.request_id })
    if (ahead > 0) this.#deps.onQueued?.()
    queueMicrotask(() => void this.#pump())
    return { turn_id: command.turn_id, queued: ahead }
  }

  /** Ends the running turn, drops queued prompts, and ends every process of the session. */
  stop(reason: string | undefined, requestId: RequestId | undefined, options: { interrupt?: boolean } = {}): Promise<ReplyOf<'stop'>> {
    return this.#serialize(async () => {
      // A stop applies to everything the client sent before it, including a prompt still being admitted or a CLI still starting.
      await this.#admission
      // A CLI that failed to start failed its turn already; the stop still goes on.
      await this.#spawning?.catch(() => {})
      const turn = this.#turn
      const hadWork = turn !== undefined || this.#queue.length > 0 || this.#process !== undefined
      // Every turn ends with an event, including those that never started.
      for (const dropped of this.#queue.splice(0)) this.#emitTurn(dropped, { event: 'stopped', data: 'dropped by stop before it started' })
      if (turn) turn.ending = 'stop'
      await this.#endProcess(turn !== undefined && options.interrupt !== false)
      if (turn && this.#turn === turn) this.#finishTurn()
      const draft: EventDraft = { event: 'stopped' }
      if (reason !== undefined) draft.data = reason
      if (turn) draft.turn_id = turn.id
      if (requestId !== undefined) draft.request_id = requestId
      this.#deps.emit(draft)
      // Nothing runs now: the session is handed back after the idle timeout.
      this.#armIdleTimer()
      return { stopped: hadWork }
    })
  }

  /** Frees the process; the conversation stays resumable through its marker. `interrupt: false` signals the CLI at once. */
  close(options: { interrupt?: boolean } = {}): Promise<void> {
    return this.stop('session closed', undefined, options).then(() => clearTimeout(this.#idleTimer))
  }

  async #pump(): Promise<void> {
    if (this.#turn || this.#spawning || this.#queue.length === 0) return
    const next = this.#queue.shift()!
    const turn: ActiveTurn = { ...next, toolNames: new Map(), toolCalls: 0 }
    this.#turn = turn
    clearTimeout(this.#idleTimer)
    if (!turn.retried) {
      this.#deps.onTurnStarted?.({ turnId: turn.id, requestId: turn.requestId, workDir: this.#conversation.workDir, engine: this.#conversation.engine })
      this.#emitTurn(turn, { event: 'turn_started', data: turn.prompt, ...(turn.instructions !== undefined && { instructions: turn.instructions }) })
      const blocked = this.#deps.waf?.checkPrompt(turn.prompt)
      if (blocked) {
        // The prompt never reaches the CLI: the turn ends with the WAF's error.
        this.#stats = addStats(this.#stats, { ...emptyStats(), errors: 1 })
        this.#emitTurn(turn, blocked)
        this.#finishTurn()
        return
      }
    }
    // A reap or stop in progress must finish before the turn picks its process.
    await this.#lifecycle
    if (this.#turn !== turn || turn.ending) return
    let running = this.#process
    if (!running) {
      const spawning = this.#spawn(turn)
      this.#spawning = spawning
      try {
        running = await spawning
      } catch (err) {
        const error = toServiceError(err)
        this.#failTurn(turn, error.code, error.message)
        return
      } finally {
        this.#spawning = undefined
      }
      if (this.#turn !== turn || turn.ending) return // stopped while starting; stop ends the process
    }
    const { turnTimeoutMs } = this.#deps.settings
    if (turnTimeoutMs > 0) turn.clock = new TurnClock(turnTimeoutMs, () => void this.#timeOut(turn))
    running.send(turn)
  }

  async #spawn(turn: ActiveTurn): Promise<CliProcess> {
    const { settings } = this.#deps
    const workDir = this.#conversation.workDir!
    // The agent can swap its sandbox for a symlink between turns: check it again before a CLI starts in it.
    await verifySandbox(await this.#conversation.sandboxBase(), workDir)
    const resume = this.#conversation.stored
    const slot = settings.engines.get(this.#conversation.engine)
    const running = await CliProcess.start(
      { ...this.#deps, engine: slot.engine, sandbox: slot.sandbox, engineEnv: slot.env, stopGraceMs: settings.stopGraceMs, approver: this.#deskFor(slot) },
      {
        sessionId: this.id,
        cliSessionId: this.#cliSessionId,
        conversationId: this.#conversation.conversationId,
        workDir,
        resume,
        instructions: this.#conversation.begin(turn.instructions),
        serving: turn,
        reportDenied: (draft) => (this.#turn ? this.#emitTurn(this.#turn, draft) : this.#deps.emit(draft)),
        onOutput: (cli, output) => this.#onOutput(cli, output),
        onExit: (cli, exit) => this.#onExit(cli, exit),
      },
    )
    this.#process = running
    return running
  }

  #deskFor(slot: EngineSlot): SteeringDesk | undefined {
    if (slot.approval?.mode !== 'ask') return undefined
    this.#desk ??= new SteeringDesk({
      policy: slot.approval,
      emit: (draft) => (this.#turn ? this.#emitTurn(this.#turn, draft) : this.#deps.emit(draft)),
      // engine.timeout does not run while the turn waits for a person.
      onWaiting: (waiting) => (waiting ? this.#turn?.clock?.pause() : this.#turn?.clock?.resume()),
    })
    return this.#desk
  }

  #onOutput(running: CliProcess, output: EngineOutput): void {
    if (this.#process !== running) return
    running.heard()
    this.#armIdleTimer()
    const turn = this.#turn
    if (output.kind === 'init' && output.cliSessionId !== undefined) this.#conversation.named(output.cliSessionId)
    if (output.kind === 'result') {
      running.resulted()
      if (turn) this.#completeTurn(turn, running, output.result)
      running.finishedATurn = true
      return
    }
    if (!turn || turn.ending) return
    if (output.kind === 'tool_use') {
      turn.toolCalls++
      turn.toolNames.set(output.id, output.name)
    }
    const draft = outputEvent(output, turn.toolNames)
    if (draft) this.#emitTurn(turn, draft)
  }

  #completeTurn(turn: ActiveTurn, running: CliProcess, result: TurnResult): void {
    // A resumed CLI that found no conversation to continue, on the turn's last try.
    let lost = false
    if (result.isError) {
      const retry = retryAfterFailedTurn(running, result.conversationNotFound === true, turn.retried === true)
      if (retry.retry) return this.#retryTurn(turn, running, retry)
      lost = conversationLost(running, result.conversationNotFound === true)
    }
    const stats = turnStats(result, this.#lastCumulativeCost, turn.toolCalls)
    this.#lastCumulativeCost = result.cumulativeCostUsd
    if (lost) {
      // The next turn starts a new conversation, in a new process, instead of failing on the lost one again.
      this.#conversation.stored = false
      if (this.#process === running) this.#process = undefined
      running.abandon()
    } else this.#conversation.saved()
    if (turn.ending) {
      // The CLI's answer to our interrupt: the stop or timeout path reports the turn.
      this.#stats = addStats(this.#stats, { ...stats, turns: 0, errors: 0 })
      return
    }
    if (result.isError) {
      this.#stats = addStats(this.#stats, { ...stats, turns: 0 })
      const detail = result.text || result.errors?.join('; ') || result.subtype
      this.#endTurnWithError(turn, 'ENGINE_ERROR', `the agent CLI reported a failed turn (${result.subtype}): ${detail}`)
      return
    }
    this.#stats = addStats(this.#stats, stats)
    this.#emitTurn(turn, { event: 'session_stats', stats: this.#stats, turn_stats: stats, tools_used: [...new Set(turn.toolNames.values())], is_error: false })
    this.#emitTurn(turn, { event: 'completed', stats: this.#stats, turn_stats: stats, data: result.text })
    this.#finishTurn()
  }

  #onExit(running: CliProcess, exit: EngineExit): void {
    if (this.#process !== running) return
    this.#process = undefined
    const { code, signal } = exit
    this.#deps.log.info({ session_id: this.id, code, signal }, 'agent CLI exited')
    const turn = this.#turn
    // A turn waiting for this process's end (an idle reap, a stop) starts in a new one.
    if (!turn || turn.ending || running.serving !== turn) return
    const retry = retryAfterExit(running, exit.conversationInUse === true, turn.retried === true)
    if (retry.retry) return this.#retryTurn(turn, running, retry)
    const why = running.stderr.length > 0 ? `: ${running.stderr.slice(-3).join(' / ')}` : ''
    this.#failTurn(turn, 'ENGINE_EXITED', `the agent CLI exited (${signal ?? `code ${code}`}) before the turn ended${why}`)
  }

  /** Runs the turn again, once, in a new CLI process. */
  #retryTurn(turn: ActiveTurn, running: CliProcess, retry: RetryDecision & { retry: true }): void {
    if (retry.resume !== undefined) this.#conversation.stored = retry.resume
    this.#deps.log.warn(
      { session_id: this.id, resume: this.#conversation.stored, stderr: running.stderr },
      'agent CLI did not take the turn; retrying in a new process',
    )
    if (this.#process === running) this.#process = undefined
    running.abandon()
    turn.clock?.clear()
    this.#turn = undefined
    this.#queue.unshift({ id: turn.id, prompt: turn.prompt, instructions: turn.instructions, requestId: turn.requestId, retried: true })
    queueMicrotask(() => void this.#pump())
  }

  async #timeOut(turn: ActiveTurn): Promise<void> {
    if (this.#turn !== turn || turn.ending) return
    turn.ending = 'timeout'
    await this.#serialize(async () => {
      const running = this.#process
      if (running && !(await running.interrupt())) await this.#endProcess(false)
      if (this.#turn === turn) {
        const limit = this.#deps.settings.turnTimeoutMs
        this.#endTurnWithError(turn, 'TURN_TIMEOUT', `the turn ran longer than engine.timeout (${limit} ms) and was interrupted`)
      }
    })
  }

  /** Interrupts (optionally), then ends every process of the session: SIGTERM, grace, SIGKILL. */
  async #endProcess(interruptFirst: boolean): Promise<void> {
    const running = this.#process
    if (!running) return
    await running.end(interruptFirst)
    if (this.#process === running) this.#process = undefined
  }

  #failTurn(turn: ActiveTurn, code: ErrorCode, message: string): void {
    this.#stats = addStats(this.#stats, { ...emptyStats(), errors: 1 })
    this.#endTurnWithError(turn, code, message)
  }

  #endTurnWithError(turn: ActiveTurn, code: ErrorCode, message: string): void {
    this.#emitTurn(turn, { event: 'error', data: message, error: { code, message } })
    this.#finishTurn()
  }

  #finishTurn(): void {
    const turn = this.#turn
    if (!turn) return
    turn.clock?.clear()
    // What still waits for a person is settled with the turn's id, before the turn is gone.
    this.#desk?.endTurn()
    this.#turn = undefined
    this.#deps.onTurnEnded?.(this.#stats)
    this.#armIdleTimer()
    queueMicrotask(() => void this.#pump())
  }

  #emitTurn(turn: Turn, draft: EventDraft): void {
    draft.turn_id = turn.id
    if (turn.requestId !== undefined) draft.request_id = turn.requestId
    this.#deps.emit(draft)
  }

  /**
   * After `engine.idle_timeout` without a turn: ends the CLI if one runs, and hands the session
   * back (onReaped) either way, so a session whose CLI is gone (stopped, crashed) frees its place.
   */
  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer)
    const { idleTimeoutMs } = this.#deps.settings
    if (idleTimeoutMs <= 0 || this.busy) return
    this.#idleTimer = setTimeout(() => {
      void this.#serialize(async () => {
        if (this.busy) return
        if (this.#process) {
          this.#deps.log.info({ session_id: this.id }, 'reaping idle agent CLI')
          await this.#endProcess(false)
        }
        // A prompt admitted while the CLI ended keeps the session here.
        if (!this.busy) this.#deps.onReaped?.()
      })
    }, idleTimeoutMs)
    this.#idleTimer.unref()
  }

  #serialize<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.#lifecycle.then(operation, operation)
    this.#lifecycle = next.catch(() => {})
    return next
  }
}
