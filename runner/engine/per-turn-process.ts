import { ServiceError } from '../../contract/mod.ts'
import type { EngineExit, EngineHandlers, EngineProcess, TurnResult } from './engine.ts'

/**
 * The runner's long-lived `EngineProcess` over a CLI that runs one process
 * per turn and continues its stored conversation in the next (`opencode run
 * --session`): each `send` starts a turn's process, turns run one at a time
 * (a prompt sent during a turn waits), and every turn ends in exactly one
 * `result`, also when its process could not start or was killed. `interrupt`
 * stops the running turn's process (the engine's `stop`), and that turn's
 * result is a failed one; `endInput` lets the running turn finish and then
 * resolves `exited`.
 */

/** One turn's CLI process, started by the engine. */
export interface TurnProcess {
  readonly pid: number
  /** The turn's result, once the process exited and all its output was read; never rejects. Its cost is the turn's own (the adapter sums them). */
  readonly result: Promise<TurnResult>
  /** Ends the turn's process and whatever it started (an interrupt); its result follows. */
  stop(): void
}

/** Starts a turn's process for a prompt and the instructions it asks for; rejects (ENGINE_START_FAILED) when it cannot start. */
export type StartTurn = (prompt: string, instructions: string | undefined) => Promise<TurnProcess>

/** A failed turn's result, for a turn whose process gave none of its own. */
export function failedTurn(why: string, extra: Partial<TurnResult> = {}): TurnResult {
  return {
    isError: true,
    subtype: 'error_during_execution',
    text: why,
    durationMs: 0,
    durationApiMs: 0,
    numTurns: 0,
    cumulativeCostUsd: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    errors: [why],
    ...extra,
  }
}

export class PerTurnProcess implements EngineProcess {
  readonly exited: Promise<EngineExit>
  readonly #startTurn: StartTurn
  readonly #handlers: EngineHandlers
  readonly #queue: { prompt: string; instructions: string | undefined }[] = []
  readonly #exit = Promise.withResolvers<EngineExit>()
  /** The running turn (its process once started); undefined between turns. */
  #turn: { process?: TurnProcess; interrupted?: true } | undefined
  #lastPid = -1
  #ending = false
  #lastExit: EngineExit = { code: 0, signal: null }
  /** The turns' costs so far: `cumulativeCostUsd` is a running sum within the process, as the runner reads it. */
  #costUsd = 0

  constructor(startTurn: StartTurn, handlers: EngineHandlers) {
    this.#startTurn = startTurn
    this.#handlers = handlers
    this.exited = this.#exit.promise
  }

  /** The running turn's process; between turns the last one's (gone); -1 before the first. */
  get pid(): number {
    return this.#turn?.process?.pid ?? this.#lastPid
  }

  send(prompt: string, instructions?: string | undefined): void {
    if (this.#ending) {
      this.#handlers.onOutput({ kind: 'result', result: failedTurn('the engine was asked to finish; no new turn starts') })
      return
    }
    this.#queue.push({ prompt, instructions })
    if (!this.#turn) void this.#next()
  }

  interrupt(): void {
    const turn = this.#turn
    if (!turn || turn.interrupted) return
    turn.interrupted = true
    // Before its process runs, the start is checked again (below).
    turn.process?.stop()
  }

  endInput(): void {
    this.#ending = true
    this.#queue.length = 0
    if (!this.#turn) this.#exit.resolve(this.#lastExit)
  }

  async #next(): Promise<void> {
    const next = this.#queue.shift()
    if (next === undefined) {
      if (this.#ending) this.#exit.resolve(this.#lastExit)
      return
    }
    const turn: { process?: TurnProcess; interrupted?: true } = {}
    this.#turn = turn
    let result: TurnResult
    try {
      const child = await this.#startTurn(next.prompt, next.instructions)
      turn.process = child
      this.#lastPid = child.pid
      if (turn.interrupted) child.stop()
      result = await child.result
    } catch (err) {
      const why = err instanceof ServiceError ? err.message : `the agent CLI could not start: ${(err as Error).message}`
      result = failedTurn(why)
    }
    this.#lastExit = result.isError ? { code: 1, signal: null } : { code: 0, signal: null }
    this.#turn = undefined
    this.#costUsd += result.cumulativeCostUsd
    const ended = { ...result, cumulativeCostUsd: this.#costUsd, ...(turn.interrupted && { isError: true, subtype: 'error_during_execution' }) }
    this.#handlers.onOutput({ kind: 'result', result: ended })
    // A prompt sent from within onOutput may have started the next turn already.
    if (!this.#turn) await this.#next()
  }
}
