import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { ServiceError } from '../../contract/mod.ts'
import type { Approver } from '../engine/approver.ts'
import type { Engine, EngineExit, EngineOutput, EngineProcess } from '../engine/engine.ts'
import { buildEnv } from '../process/env.ts'
import type { ProcessGuard } from '../process/guardian.ts'
import { killProcessGroup, terminateSession } from '../process/terminate.ts'
import type { SessionSandbox } from '../sandbox-exec/mod.ts'
import type { ErrorDraft, SessionWaf } from '../../waf/mod.ts'
import type { ProcessFacts } from './retry.ts'
import type { ActiveTurn } from './turn.ts'

/** How long the CLI may take to acknowledge an interrupt before it is signalled. */
const INTERRUPT_WAIT_MS = 1_000
/** The first stderr lines kept, to tell why a CLI refused to start. */
const STDERR_LINES = 20

/** What every CLI process of a session is started with. */
export interface CliProcessDeps {
  engine: Engine
  /** The kernel sandbox each CLI starts in (runner/sandbox-exec). */
  sandbox: SessionSandbox
  engineEnv: Record<string, string>
  stopGraceMs: number
  /** Decides the CLI's tool calls (waf); none means no WAF. */
  waf?: SessionWaf | undefined
  /** Asks a person (engine.approval: ask); none: nothing is asked. */
  approver?: Approver | undefined
  /** Ends the session's processes if the runner dies without doing it. */
  guard?: ProcessGuard | undefined
  log: Logger
}

/** One CLI process to start. */
export interface CliStart {
  sessionId: string
  cliSessionId: string
  /** The CLI's own id of the conversation, when it named it itself (EngineStartOptions.conversationId). */
  conversationId: string | undefined
  workDir: string
  /** Continue the CLI's stored conversation (--resume) instead of starting it. */
  resume: boolean
  /** The conversation's instructions (EngineStartOptions.instructions). */
  instructions: string | undefined
  /** The turn it is started for. */
  serving: ActiveTurn
  /** Where a tool call the WAF denied is reported. */
  reportDenied(draft: ErrorDraft): void
  onOutput(process: CliProcess, output: EngineOutput): void
  /** After the process and whatever it left behind are gone. */
  onExit(process: CliProcess, exit: EngineExit): void
}

/**
 * One agent CLI process of a session, in its sandbox and with its WAF tool gate:
 * started, given prompts, interrupted, ended (SIGTERM, grace, SIGKILL, for
 * every process tagged as the session's), and what it showed of itself.
 */
export class CliProcess implements ProcessFacts {
  readonly engine: EngineProcess
  /** Tags every descendant's environment, so strays can be found. */
  readonly tag: string
  readonly resumed: boolean
  finishedATurn = false
  heardSinceSend = false
  /** The turn it was started for or last given: its exit can only cut that turn short. */
  serving: ActiveTurn
  /** The first stderr lines, to tell why a CLI refused to start. */
  readonly stderr: string[] = []
  readonly #deps: CliProcessDeps
  readonly #sessionId: string
  /** Resolves when the CLI printed the result of an interrupted turn. */
  #interrupted: PromiseWithResolvers<void> | undefined

  private constructor(deps: CliProcessDeps, start: CliStart, engine: EngineProcess, tag: string) {
    this.#deps = deps
    this.#sessionId = start.sessionId
    this.engine = engine
    this.tag = tag
    this.resumed = start.resume
    this.serving = start.serving
  }

  /** Starts the CLI; rejects (ENGINE_START_FAILED or the sandbox's error) when it cannot. */
  static async start(deps: CliProcessDeps, start: CliStart): Promise<CliProcess> {
    const { engine, log } = deps
    const { resume, instructions, workDir } = start
    const tag = randomUUID()
    // A denied tool call is reported on the turn running then; the agent goes on.
    const waf = deps.waf?.attach(start.reportDenied)
    const env = buildEnv(process.env, deps.engineEnv, tag)
    const launch = await deps.sandbox.prepare({ key: start.cliSessionId, workDir, env }).catch((err: unknown) => {
      waf?.detach()
      throw err instanceof ServiceError
        ? err
        : new ServiceError('ENGINE_START_FAILED', `cannot prepare the session sandbox: ${(err as Error).message}`, { cause: err })
    })
    const engineProcess = await engine
      .start(
        {
          cwd: workDir,
          cliSessionId: start.cliSessionId,
          conversationId: start.conversationId,
          resume,
          env: launch.env,
          wrap: launch.wrap,
          controlDir: launch.controlDir,
          toolGate: waf?.gate,
          approver: deps.approver,
          instructions,
        },
        {
          // The engine reports nothing before start() resolved: `cli` is set by then.
          onOutput: (output) => start.onOutput(cli, output),
          onOverlong: (bytes) => log.warn({ session_id: start.sessionId, bytes }, 'dropped an over-long line from the agent CLI'),
          onStderr: (line) => {
            if (cli.stderr.length < STDERR_LINES) cli.stderr.push(line)
            log.debug({ session_id: start.sessionId, stderr: line }, 'agent CLI stderr')
          },
        },
      )
      .catch((err: unknown) => {
        waf?.detach()
        void launch.dispose()
        throw err
      })
    const cli = new CliProcess(deps, start, engineProcess, tag)
    deps.guard?.watch(tag)
    log.info({ session_id: start.sessionId, pid: engineProcess.pid, resume, sandbox: launch.mode }, 'agent CLI started')
    void engineProcess.exited.then((exit) => {
      waf?.detach()
      void launch.dispose()
      cli.#cleanUp()
      cli.#interrupted?.resolve()
      start.onExit(cli, exit)
    })
    return cli
  }

  /** Gives the CLI a turn: its prompt and the instructions it asks for. */
  send(turn: ActiveTurn): void {
    this.heardSinceSend = false
    this.serving = turn
    this.engine.send(turn.prompt, turn.instructions)
  }

  /** The CLI printed something. */
  heard(): void {
    this.heardSinceSend = true
  }

  /** The CLI printed a turn's result: an interrupt waiting for it is answered. */
  resulted(): void {
    this.#interrupted?.resolve()
  }

  /** Sends the CLI's interrupt and waits for the turn's result; false when it did not come in time. */
  async interrupt(): Promise<boolean> {
    this.#interrupted = Promise.withResolvers()
    this.engine.interrupt()
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), INTERRUPT_WAIT_MS)))
    const answered = await Promise.race([this.#interrupted.promise.then(() => true), timedOut])
    clearTimeout(timer)
    return answered
  }

  /** Interrupts (optionally), then ends every process of the session and waits for the CLI's exit. */
  async end(interruptFirst: boolean): Promise<void> {
    if (interruptFirst) await this.interrupt()
    this.engine.endInput()
    await this.#terminate()
    await this.engine.exited
  }

  /** Ends it without waiting (a turn it did not take goes to a new process). */
  abandon(): void {
    this.engine.endInput()
    void this.#terminate()
  }

  /** Ends every process of the running CLI; without a view of the process table, at least the CLI's own group. */
  async #terminate(): Promise<void> {
    try {
      const result = await terminateSession(this.engine.pid, this.tag, this.#deps.stopGraceMs)
      if (result.survivors.length > 0) this.#deps.log.error({ session_id: this.#sessionId, survivors: result.survivors }, 'session processes survived SIGKILL')
    } catch (err) {
      this.#deps.log.error({ err, session_id: this.#sessionId }, "cannot read the process table; killing the agent CLI's process group")
      killProcessGroup(this.engine.pid)
    }
  }

  /** Tool commands the CLI left behind go with it; then the guardian can forget the tag. */
  #cleanUp(): void {
    void terminateSession(undefined, this.tag, this.#deps.stopGraceMs)
      .then(() => this.#deps.guard?.release(this.tag))
      // Not released: the guardian ends them when the runner goes.
      .catch((err: unknown) => this.#deps.log.error({ err, session_id: this.#sessionId }, 'cannot look for processes the agent CLI left behind'))
  }
}
