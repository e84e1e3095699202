import { randomUUID } from 'node:crypto'
import path from 'node:path'
import type { Logger } from 'pino'
import {
  addStats,
  emptyStats,
  ServiceError,
  toServiceError,
  type CommandOf,
  type ErrorCode,
  type ReplyOf,
  type RequestId,
  type ServiceEvent,
  type Stats,
} from '../contract/mod.ts'
import type { RecordedTurn } from '../state/mod.ts'
import { cliSessionId, type MarkerStore, type SessionMarker } from './cli-session.ts'
import { expired, pastDeadline } from './deadline.ts'
import type { Engine, EngineOutput, EngineProcess, TurnResult } from './engine/engine.ts'
import { buildEnv } from './process/env.ts'
import { unsandboxed, type SessionSandbox } from './sandbox-exec/mod.ts'
import { WAF_SOCKET_VAR } from './waf/hook-protocol.ts'
import type { ProcessGuard } from './process/guardian.ts'
import type { SessionWaf } from './waf/guard.ts'
import { killProcessGroup, terminateSession } from './process/terminate.ts'
import { resolveSandbox, sandboxLabel, verifySandbox } from './sandbox.ts'
import { turnStats } from './turn-stats.ts'

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
/** An event before the runner stamps it with session id, sequence and time. */
export type EventDraft = DistributiveOmit<ServiceEvent, 'session_id' | 'seq' | 'ts'>

export interface SessionSettings {
  namespace: string
  workBase: string
  maxQueue: number
  /** Milliseconds; 0 means no limit. */
  turnTimeoutMs: number
  idleTimeoutMs: number
  stopGraceMs: number
  engineEnv: Record<string, string>
  /** The kernel sandbox each CLI starts in (runner/sandbox-exec); none: the CLI runs as it is, with the environment allowlist only. */
  sandbox?: SessionSandbox | undefined
}

export interface SessionDeps {
  engine: Engine
  markers: MarkerStore
  settings: SessionSettings
  emit(draft: EventDraft): void
  log: Logger
  /** Checks prompts and tool calls (runner/waf); none means no WAF. */
  waf?: SessionWaf | undefined
  /** Stats the session had before this runner took it (from the registry). */
  initialStats?: Stats | undefined
  /** Told when a turn starts and ends, so the registry knows what runs. */
  onTurnStarted?(turnId: string, requestId: RequestId | undefined, workDir: string | undefined): void
  onTurnEnded?(stats: Stats): void
  /** A prompt joined the queue behind a running turn. */
  onQueued?(): void
  /** The idle reaper ended the CLI: the session needs nothing from this runner now. */
  onReaped?(): void
  /** Ends the session's processes if the runner dies without doing it. */
  guard?: ProcessGuard | undefined
}

/** A prompt taken into the queue (the runner adds the sequence to the reply). */
type Admitted = Omit<ReplyOf<'execute'>, 'after_seq'>

interface Turn {
  id: string
  prompt: string
  instructions?: string | undefined
  requestId?: RequestId | undefined
  /** Set once the turn was started again in a new CLI process (see #retryTurn). */
  retried?: boolean
}

interface ActiveTurn extends Turn {
  toolNames: Map<string, string>
  toolCalls: number
  timer?: NodeJS.Timeout | undefined
  /** Set when the turn is being ended by the service rather than by the CLI. */
  ending?: 'stop' | 'timeout' | undefined
}

interface RunningProcess {
  engine: EngineProcess
  /** Tags every descendant's environment, so strays can be found. */
  tag: string
  /** Started with --resume rather than --session-id. */
  resumed: boolean
  /** A turn has ended in this process. */
  finishedATurn: boolean
  /** The CLI printed something since the last prompt was written to it. */
  heardSinceSend: boolean
  /** The turn it was started for or last given: its exit can only cut that turn short. */
  serving: ActiveTurn
  /** The first stderr lines, to tell why a CLI refused to start. */
  stderr: string[]
  instructions?: string | undefined
  /** Resolves when the CLI printed the result of an interrupted turn. */
  interrupted?: PromiseWithResolvers<void> | undefined
}

/** How long the CLI may take to acknowledge an interrupt before it is signalled. */
const INTERRUPT_WAIT_MS = 1_000

/**
 * One agent session on this runner: a FIFO of prompts, at most one turn at a
 * time in one long-lived CLI process (the CLI merges prompts written mid-turn),
 * stats summed over turns, a turn time limit and an idle reaper.
 */
export class Session {
  readonly id: string
  readonly #deps: SessionDeps
  readonly #cliSessionId: string
  #workDir: string | undefined
  #queue: Turn[] = []
  #turn: ActiveTurn | undefined
  #process: RunningProcess | undefined
  /** Set while a CLI process is being started. */
  #spawning: Promise<unknown> | undefined
  #stats: Stats = emptyStats()
  #lastCumulativeCost = 0
  /** The CLI has a stored conversation for this session: start it with --resume. */
  #hasConversation = false
  #markerSaved = false
  /** The appended system prompt the CLI conversation has, once known. */
  #conversationInstructions: string | undefined
  #idleTimer: NodeJS.Timeout | undefined
  /** Admissions of prompts, one at a time (checking work_dir is asynchronous). */
  #admission: Promise<unknown> = Promise.resolve()
  /** Prompts taken but not yet queued: the reaper must not hand the session back under them. */
  #admitting = 0
  /** Lifecycle operations (stop, reap) run one at a time. */
  #lifecycle: Promise<unknown> = Promise.resolve()

  constructor(id: string, deps: SessionDeps) {
    this.id = id
    this.#deps = deps
    if (deps.initialStats) this.#stats = deps.initialStats
    // A session claimed for a stop or stats alone is handed back when idle, too.
    this.#armIdleTimer()
    this.#cliSessionId = cliSessionId(deps.settings.namespace, id)
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
    await this.#ensureWorkDir(command.work_dir)
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

  async #ensureWorkDir(requested: string | undefined): Promise<void> {
    const { settings, markers } = this.#deps
    if (this.#workDir === undefined) {
      const marker = await markers.read(this.id)
      if (marker) {
        this.#hasConversation = true
        this.#markerSaved = true
        this.#workDir = marker.work_dir
        this.#conversationInstructions = marker.instructions
      }
    }
    if (requested === undefined && this.#workDir !== undefined) return
    const resolved = await resolveSandbox(settings.workBase, this.id, requested)
    if (this.#workDir !== undefined && resolved !== this.#workDir) {
      throw new ServiceError('WORK_DIR_MISMATCH', `session ${this.id} works in "${await sandboxLabel(settings.workBase, this.#workDir)}"; work_dir must stay the same within a session`)
    }
    this.#workDir = resolved
  }

  async #pump(): Promise<void> {
    if (this.#turn || this.#spawning || this.#queue.length === 0) return
    const next = this.#queue.shift()!
    const turn: ActiveTurn = { ...next, toolNames: new Map(), toolCalls: 0 }
    this.#turn = turn
    clearTimeout(this.#idleTimer)
    if (!turn.retried) {
      this.#deps.onTurnStarted?.(turn.id, turn.requestId, this.#workDir)
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
    let text = turn.prompt
    if (turn.instructions !== undefined && turn.instructions !== running.instructions) {
      // The system prompt is fixed when the CLI starts; later changes travel with the turn.
      text = `<instructions>\n${turn.instructions}\n</instructions>\n\n${turn.prompt}`
      running.instructions = turn.instructions
    }
    const { turnTimeoutMs } = this.#deps.settings
    if (turnTimeoutMs > 0) turn.timer = setTimeout(() => void this.#timeOut(turn), turnTimeoutMs)
    running.heardSinceSend = false
    running.serving = turn
    running.engine.send(text)
  }

  async #spawn(turn: ActiveTurn): Promise<RunningProcess> {
    const { engine, settings, log } = this.#deps
    const { instructions } = turn
    // The agent can swap its sandbox for a symlink between turns: check it again before a CLI starts in it.
    await verifySandbox(settings.workBase, this.#workDir!)
    const tag = randomUUID()
    const resume = this.#hasConversation
    // A resumed conversation keeps the system prompt it started with; a new one takes this turn's.
    if (!resume) this.#conversationInstructions = instructions
    // A denied tool call is reported on the turn running then; the agent goes on.
    const waf = await this.#deps.waf?.attach(tag, (draft) => (this.#turn ? this.#emitTurn(this.#turn, draft) : this.#deps.emit(draft)))
    const env = buildEnv(process.env, { ...settings.engineEnv, ...waf?.env }, tag)
    // The WAF hook runs inside the sandbox: its socket's directory is bound there read-only.
    const wafSocket = waf?.env[WAF_SOCKET_VAR]
    const sandbox = settings.sandbox
    const launch = await (sandbox ? sandbox.prepare({ key: this.#cliSessionId, workDir: this.#workDir!, env, readOnly: wafSocket ? [path.dirname(wafSocket)] : [] }) : Promise.resolve(unsandboxed(env))).catch((err: unknown) => {
      waf?.detach()
      throw err instanceof ServiceError ? err : new ServiceError('ENGINE_START_FAILED', `cannot prepare the session sandbox: ${(err as Error).message}`, { cause: err })
    })
    const engineProcess = await engine.start(
      {
        cwd: this.#workDir!,
        cliSessionId: this.#cliSessionId,
        resume,
        env: launch.env,
        wrap: launch.wrap,
        preToolHook: waf?.preToolHook,
        ...(!resume && instructions !== undefined && { appendSystemPrompt: instructions }),
      },
      {
        onOutput: (output) => this.#onOutput(running, output),
        onOverlong: (bytes) => log.warn({ session_id: this.id, bytes }, 'dropped an over-long line from the agent CLI'),
        onStderr: (line) => {
          if (running.stderr.length < 20) running.stderr.push(line)
          log.debug({ session_id: this.id, stderr: line }, 'agent CLI stderr')
        },
      },
    ).catch((err: unknown) => {
      waf?.detach()
      void launch.dispose()
      throw err
    })
    const running: RunningProcess = {
      engine: engineProcess,
      tag,
      resumed: resume,
      finishedATurn: false,
      heardSinceSend: false,
      stderr: [],
      instructions: this.#conversationInstructions,
      serving: turn,
    }
    this.#process = running
    this.#deps.guard?.watch(tag)
    log.info({ session_id: this.id, pid: engineProcess.pid, resume, sandbox: launch.mode }, 'agent CLI started')
    void engineProcess.exited.then((exit) => {
      waf?.detach()
      void launch.dispose()
      this.#onExit(running, exit.code, exit.signal)
    })
    return running
  }

  #onOutput(running: RunningProcess, output: EngineOutput): void {
    if (this.#process !== running) return
    running.heardSinceSend = true
    this.#armIdleTimer()
    const turn = this.#turn
    if (output.kind === 'result') {
      running.interrupted?.resolve()
      if (turn) this.#completeTurn(turn, running, output.result)
      running.finishedATurn = true
      return
    }
    if (!turn || turn.ending) return
    switch (output.kind) {
      case 'thinking':
        this.#emitTurn(turn, { event: 'thinking', data: output.text, ...(output.messageId && { message_id: output.messageId }) })
        break
      case 'text':
        this.#emitTurn(turn, { event: 'answer', data: output.text, ...(output.messageId && { message_id: output.messageId }) })
        break
      case 'tool_use':
        turn.toolCalls++
        turn.toolNames.set(output.id, output.name)
        this.#emitTurn(turn, {
          event: 'tool_use',
          data: output.name,
          tool: { id: output.id, name: output.name, input: output.input },
          ...(output.messageId && { message_id: output.messageId }),
        })
        break
      case 'tool_result': {
        const name = turn.toolNames.get(output.toolUseId)
        this.#emitTurn(turn, {
          event: 'tool_result',
          data: output.content,
          tool: name === undefined ? { id: output.toolUseId } : { id: output.toolUseId, name },
          is_error: output.isError,
        })
        break
      }
      case 'init':
      case 'noise':
        break
    }
  }

  #completeTurn(turn: ActiveTurn, running: RunningProcess, result: TurnResult): void {
    const detail = result.text || result.errors?.join('; ') || result.subtype
    if (result.isError && running.resumed && !running.finishedATurn && /no conversation found/i.test(detail) && !turn.retried) {
      // The marker outlived the CLI's transcript (another HOME, a wiped disk): start the conversation anew.
      this.#hasConversation = false
      this.#retryTurn(turn, running)
      return
    }
    const stats = turnStats(result, this.#lastCumulativeCost, turn.toolCalls)
    this.#lastCumulativeCost = result.cumulativeCostUsd
    this.#writeMarker()
    if (turn.ending) {
      // The CLI's answer to our interrupt: the stop or timeout path reports the turn.
      this.#stats = addStats(this.#stats, { ...stats, turns: 0, errors: 0 })
      return
    }
    if (result.isError) {
      this.#stats = addStats(this.#stats, { ...stats, turns: 0 })
      this.#endTurnWithError(turn, 'ENGINE_ERROR', `the agent CLI reported a failed turn (${result.subtype}): ${detail}`)
      return
    }
    this.#stats = addStats(this.#stats, stats)
    this.#emitTurn(turn, { event: 'completed', stats: this.#stats, turn_stats: stats, data: result.text })
    this.#finishTurn()
  }

  #onExit(running: RunningProcess, code: number | null, signal: string | null): void {
    // Tool commands the CLI left behind go with it; then the guardian can forget the tag.
    void terminateSession(undefined, running.tag, this.#deps.settings.stopGraceMs)
      .then(() => this.#deps.guard?.release(running.tag))
      // Not released: the guardian ends them when the runner goes.
      .catch((err: unknown) => this.#deps.log.error({ err, session_id: this.id }, 'cannot look for processes the agent CLI left behind'))
    if (this.#process !== running) return
    this.#process = undefined
    running.interrupted?.resolve()
    this.#deps.log.info({ session_id: this.id, code, signal }, 'agent CLI exited')
    const turn = this.#turn
    // A turn waiting for this process's end (an idle reap, a stop) starts in a new one.
    if (!turn || turn.ending || running.serving !== turn) return
    if (!running.heardSinceSend && !turn.retried) {
      // The CLI ended without a word about the turn, so it never took the prompt
      // (it was dying already, or refused to start): run the turn once more.
      if (!running.resumed && running.stderr.some((line) => /already in use/i.test(line))) {
        // It has this conversation although no marker said so (the marker was lost): continue it.
        this.#hasConversation = true
      }
      this.#retryTurn(turn, running)
      return
    }
    const why = running.stderr.length > 0 ? `: ${running.stderr.slice(-3).join(' / ')}` : ''
    this.#failTurn(turn, 'ENGINE_EXITED', `the agent CLI exited (${signal ?? `code ${code}`}) before the turn ended${why}`)
  }

  /** Runs the turn again, once, in a new CLI process (started with --resume when the conversation exists). */
  #retryTurn(turn: ActiveTurn, running: RunningProcess): void {
    this.#deps.log.warn({ session_id: this.id, resume: this.#hasConversation, stderr: running.stderr }, 'agent CLI did not take the turn; retrying in a new process')
    if (this.#process === running) this.#process = undefined
    running.engine.endInput()
    void this.#terminate(running)
    clearTimeout(turn.timer)
    this.#turn = undefined
    this.#queue.unshift({ id: turn.id, prompt: turn.prompt, instructions: turn.instructions, requestId: turn.requestId, retried: true })
    queueMicrotask(() => void this.#pump())
  }

  async #timeOut(turn: ActiveTurn): Promise<void> {
    if (this.#turn !== turn || turn.ending) return
    turn.ending = 'timeout'
    await this.#serialize(async () => {
      const running = this.#process
      if (running && !(await this.#interrupt(running))) await this.#endProcess(false)
      if (this.#turn === turn) {
        const limit = this.#deps.settings.turnTimeoutMs
        this.#endTurnWithError(turn, 'TURN_TIMEOUT', `the turn ran longer than engine.timeout (${limit} ms) and was interrupted`)
      }
    })
  }

  /** Sends the CLI's interrupt and waits for the turn's result; false when it did not come in time. */
  async #interrupt(running: RunningProcess): Promise<boolean> {
    running.interrupted = Promise.withResolvers()
    running.engine.interrupt()
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), INTERRUPT_WAIT_MS)))
    const answered = await Promise.race([running.interrupted.promise.then(() => true), timedOut])
    clearTimeout(timer)
    return answered
  }

  /** Interrupts (optionally), then ends every process of the session: SIGTERM, grace, SIGKILL. */
  async #endProcess(interruptFirst: boolean): Promise<void> {
    const running = this.#process
    if (!running) return
    if (interruptFirst) await this.#interrupt(running)
    running.engine.endInput()
    await this.#terminate(running)
    await running.engine.exited
    if (this.#process === running) this.#process = undefined
  }

  /** Ends every process of the running CLI; without a view of the process table, at least the CLI's own group. */
  async #terminate(running: RunningProcess): Promise<void> {
    try {
      const result = await terminateSession(running.engine.pid, running.tag, this.#deps.settings.stopGraceMs)
      if (result.survivors.length > 0) this.#deps.log.error({ session_id: this.id, survivors: result.survivors }, 'session processes survived SIGKILL')
    } catch (err) {
      this.#deps.log.error({ err, session_id: this.id }, 'cannot read the process table; killing the agent CLI\'s process group')
      killProcessGroup(running.engine.pid)
    }
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
    clearTimeout(turn.timer)
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
        this.#deps.onReaped?.()
      })
    }, idleTimeoutMs)
    this.#idleTimer.unref()
  }

  #writeMarker(): void {
    this.#hasConversation = true
    if (this.#markerSaved) return
    this.#markerSaved = true
    const marker: SessionMarker = { session_id: this.id, cli_session_id: this.#cliSessionId, work_dir: this.#workDir!, created_at: new Date().toISOString() }
    if (this.#conversationInstructions !== undefined) marker.instructions = this.#conversationInstructions
    this.#deps.markers.write(marker).catch((err: unknown) => {
      this.#markerSaved = false
      // Recoverable (spec §6.3 warn): the next turn writes it again.
      this.#deps.log.warn({ session_id: this.id, err }, 'cannot write session marker')
    })
  }

  #serialize<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.#lifecycle.then(operation, operation)
    this.#lifecycle = next.catch(() => {})
    return next
  }
}

function recorded(turn: Turn): RecordedTurn {
  return turn.requestId === undefined ? { turn_id: turn.id } : { turn_id: turn.id, request_id: turn.requestId }
}
