import type { EngineExit, EngineOutput, TurnResult } from '../engine.ts'

/**
 * One turn of `opencode run --format json --thinking` (1.18.33) read line by
 * line: one JSON object a line per finished part, `{type, timestamp,
 * sessionID, part}` with type `step_start`, `reasoning`, `text`, `tool_use`
 * (a tool part whose state is `completed` or `error`), `step_finish` (the
 * step's `tokens` and `cost`), or `error` (`{error:{name, data:{message}}}`).
 * There is no end-of-turn line: the turn's result is made when the process
 * exited (`result`), from the steps' sums and the exit. A tool part's line
 * comes only once the tool finished: the gate plugin announces each call
 * before it runs (`toolStarting`), and the line then adds only its result.
 * Pure: no I/O.
 */
export class OpenCodeTurnMapper {
  #sessionId: string | undefined
  #lastText = ''
  #steps = 0
  #inputTokens = 0
  #outputTokens = 0
  #cacheRead = 0
  #cacheWrite = 0
  #costUsd = 0
  readonly #errors: string[] = []
  /** Calls already reported as tool_use (announced before they ran). */
  readonly #announced = new Set<string>()

  /** The CLI's session id, once a line named it. */
  get sessionId(): string | undefined {
    return this.#sessionId
  }

  /** A tool call about to run (the plugin asked about it): its tool_use, once. */
  toolStarting(callId: string, tool: string, input: unknown): EngineOutput[] {
    if (this.#announced.has(callId)) return []
    this.#announced.add(callId)
    return [{ kind: 'tool_use', id: callId, name: tool, input: input ?? {} }]
  }

  /** What one stdout line says. */
  line(line: string): EngineOutput[] {
    const event = parseObject(line)
    if (!event) return line.trim() === '' ? [] : [{ kind: 'noise', line }]
    const out: EngineOutput[] = []
    if (this.#sessionId === undefined && typeof event.sessionID === 'string') {
      this.#sessionId = event.sessionID
      out.push({ kind: 'init', cliSessionId: event.sessionID })
    }
    const part = isObject(event.part) ? event.part : {}
    const messageId = typeof part.messageID === 'string' ? part.messageID : undefined
    const at = messageId !== undefined ? { messageId } : {}
    switch (event.type) {
      case 'step_start':
        break
      case 'reasoning':
        if (typeof part.text === 'string' && part.text !== '') out.push({ kind: 'thinking', text: part.text, ...at })
        break
      case 'text':
        if (typeof part.text === 'string') {
          out.push({ kind: 'text', text: part.text, ...at })
          this.#lastText = part.text
        }
        break
      case 'tool_use':
        out.push(...toolOutputs(part, at).filter((o) => o.kind !== 'tool_use' || !this.#announced.has(o.id)))
        break
      case 'step_finish':
        this.#addStep(part)
        break
      case 'error':
        this.#errors.push(errorText(event.error))
        break
      default:
        out.push({ kind: 'noise', line })
    }
    return out
  }

  /** The turn's result once the process exited; `stderr` holds its last lines (why a run failed shows there). */
  result(exit: EngineExit, durationMs: number, stderr: readonly string[]): TurnResult {
    const failedRun = exit.code !== 0 || exit.signal !== null
    const errors = [...this.#errors]
    if (failedRun && errors.length === 0) errors.push(exitText(exit, stderr))
    const isError = errors.length > 0
    const result: TurnResult = {
      isError,
      subtype: isError ? 'error_during_execution' : 'success',
      text: isError && this.#lastText === '' ? errors.join('; ') : this.#lastText,
      durationMs,
      durationApiMs: 0,
      numTurns: this.#steps,
      cumulativeCostUsd: this.#costUsd,
      inputTokens: this.#inputTokens,
      outputTokens: this.#outputTokens,
      cacheReadInputTokens: this.#cacheRead,
      cacheCreationInputTokens: this.#cacheWrite,
      ...(isError && { errors }),
    }
    // `--session` of a session the CLI does not have: it prints this and exits 1 before any line.
    if (failedRun && this.#sessionId === undefined && stderr.some((l) => /Session not found/i.test(l))) result.conversationNotFound = true
    return result
  }

  #addStep(part: Record<string, unknown>): void {
    this.#steps++
    const tokens = isObject(part.tokens) ? part.tokens : {}
    const cache = isObject(tokens.cache) ? tokens.cache : {}
    this.#inputTokens += count(tokens.input)
    this.#outputTokens += count(tokens.output) + count(tokens.reasoning)
    this.#cacheRead += count(cache.read)
    this.#cacheWrite += count(cache.write)
    this.#costUsd += count(part.cost)
  }
}

/** A finished tool part: the call, and what came of it. */
function toolOutputs(part: Record<string, unknown>, at: { messageId?: string }): EngineOutput[] {
  const state = isObject(part.state) ? part.state : {}
  const id = typeof part.callID === 'string' ? part.callID : typeof part.id === 'string' ? part.id : ''
  const name = typeof part.tool === 'string' ? part.tool : 'unknown'
  const out: EngineOutput[] = [{ kind: 'tool_use', id, name, input: state.input ?? {}, ...at }]
  if (state.status === 'completed') out.push({ kind: 'tool_result', toolUseId: id, content: text(state.output), isError: false })
  else if (state.status === 'error') out.push({ kind: 'tool_result', toolUseId: id, content: text(state.error), isError: true })
  return out
}

function errorText(error: unknown): string {
  if (!isObject(error)) return 'the CLI reported an error'
  const data = isObject(error.data) ? error.data : {}
  if (typeof data.message === 'string' && data.message !== '') return data.message
  return typeof error.name === 'string' ? error.name : 'the CLI reported an error'
}

function exitText(exit: EngineExit, stderr: readonly string[]): string {
  const how = exit.signal !== null ? `was ended by ${exit.signal}` : `exited with code ${exit.code}`
  const said = stderr.filter((l) => l.trim() !== '').slice(-3)
  return `the agent CLI ${how}${said.length > 0 ? `: ${said.join(' / ')}` : ''}`
}

function text(value: unknown): string {
  if (typeof value === 'string') return value
  return value === undefined ? '' : JSON.stringify(value)
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return isObject(value) ? value : undefined
  } catch {
    return undefined
  }
}
