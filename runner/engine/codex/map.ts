/**
 * Codex app-server messages → EngineOutput (pure; the engine does the I/O).
 * Shapes from `codex app-server generate-ts` of Codex 0.169.0 and runs
 * against the fake Responses API (test/fakes/openai-responses.ts):
 * `item/completed` reasoning → thinking, agentMessage → text, commandExecution
 * `item/started` → tool_use and `item/completed` → tool_result,
 * `thread/tokenUsage/updated` (one per model request) → the turn's tokens,
 * `turn/completed` → the turn's one result.
 */
import type { EngineOutput, TurnResult } from '../engine.ts'
import type { ToolCall } from '../../../waf/mod.ts'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0)

/** The name the runner (and the WAF's rules) give Codex's shell tool: Claude Code's, whose input is `{command}` too. */
export const SHELL_TOOL = 'Bash'

/** `/bin/bash -lc '<cmd>'` as Codex reports a command → `<cmd>`; anything else as it is. */
export function unwrapShell(command: string): string {
  const match = /^\S*\/(?:ba|z)?sh -l?c '((?:[^']|'\\'')*)'$/s.exec(command)
  return match ? (match[1] ?? '').replaceAll("'\\''", "'") : command
}

/** A PreToolUse hook's stdin (`{tool_name, tool_input, tool_use_id, cwd}`) as a ToolCall; undefined when it names none. */
export function hookToolCall(request: unknown): ToolCall | undefined {
  if (!isObject(request)) return undefined
  const toolName = str(request.tool_name)
  if (!toolName || !isObject(request.tool_input)) return undefined
  const toolUseId = str(request.tool_use_id)
  const cwd = str(request.cwd)
  return { toolName, input: request.tool_input, ...(toolUseId && { toolUseId }), ...(cwd && { cwd }) }
}

/** The `init` of a `thread/start` or `thread/resume` result: the thread id is the CLI's conversation id. */
export function threadInit(result: unknown): Extract<EngineOutput, { kind: 'init' }> | undefined {
  const thread = isObject(result) ? result.thread : undefined
  const id = isObject(thread) ? str(thread.id) : undefined
  if (!id) return undefined
  const model = isObject(result) ? str(result.model) : undefined
  return { kind: 'init', cliSessionId: id, ...(model && { model }) }
}

/** Token counts of one `thread/tokenUsage/updated` (`tokenUsage.last`: the model request just made). */
interface Usage {
  input: number
  cached: number
  cacheWrite: number
  output: number
}

/** One turn's worth of notifications, folded into outputs and, at `turn/completed`, its result. */
export class CodexTurnMapper {
  #answer = ''
  #requests = 0
  #usage: Usage = { input: 0, cached: 0, cacheWrite: 0, output: 0 }
  #errors: string[] = []
  #model: string | undefined
  /** Tool calls seen starting, so a completion without a start still gets its tool_use. */
  #started = new Set<string>()

  constructor(model?: string) {
    this.#model = model
  }

  /** The outputs of one server notification (method + params). */
  map(method: string, params: unknown): EngineOutput[] {
    const p = isObject(params) ? params : {}
    switch (method) {
      case 'item/agentMessage/delta':
        return str(p.delta) ? [{ kind: 'text_delta', text: p.delta as string, ...(str(p.itemId) && { messageId: p.itemId as string }) }] : []
      case 'item/reasoning/summaryTextDelta':
      case 'item/reasoning/textDelta':
        return str(p.delta) ? [{ kind: 'thinking_delta', text: p.delta as string, ...(str(p.itemId) && { messageId: p.itemId as string }) }] : []
      case 'item/started':
        return isObject(p.item) ? this.#itemStarted(p.item) : []
      case 'item/completed':
        return isObject(p.item) ? this.#itemCompleted(p.item) : []
      case 'thread/tokenUsage/updated':
        this.#addUsage(p.tokenUsage)
        return []
      case 'error':
        if (isObject(p.error) && str(p.error.message) && p.willRetry !== true) this.#errors.push(p.error.message as string)
        return []
      case 'turn/completed':
        return isObject(p.turn) ? [{ kind: 'result', result: this.#result(p.turn) }] : []
      default:
        return []
    }
  }

  /** The result of a turn the CLI never completed (it exited or failed to start the turn). */
  failed(why: string): EngineOutput {
    return { kind: 'result', result: this.#result({ status: 'failed', error: { message: why } }) }
  }

  #itemStarted(item: Json): EngineOutput[] {
    if (item.type !== 'commandExecution' || !str(item.id)) return []
    this.#started.add(item.id as string)
    return [this.#toolUse(item)]
  }

  #itemCompleted(item: Json): EngineOutput[] {
    const id = str(item.id)
    switch (item.type) {
      case 'agentMessage': {
        const text = str(item.text) ?? ''
        this.#answer = text
        return [{ kind: 'text', text, ...(id && { messageId: id }) }]
      }
      case 'reasoning': {
        const parts = [item.summary, item.content].find((list) => Array.isArray(list) && list.length > 0) as unknown[] | undefined
        const text = (parts ?? []).filter((part) => typeof part === 'string').join('\n')
        return text ? [{ kind: 'thinking', text, ...(id && { messageId: id }) }] : []
      }
      case 'commandExecution': {
        if (!id) return []
        const outputs: EngineOutput[] = this.#started.delete(id) ? [] : [this.#toolUse(item)]
        const failed = item.status !== 'completed' || (typeof item.exitCode === 'number' && item.exitCode !== 0)
        outputs.push({ kind: 'tool_result', toolUseId: id, content: str(item.aggregatedOutput) ?? '', isError: failed })
        return outputs
      }
      default:
        return []
    }
  }

  #toolUse(item: Json): EngineOutput {
    return { kind: 'tool_use', id: item.id as string, name: SHELL_TOOL, input: { command: unwrapShell(str(item.command) ?? '') } }
  }

  #addUsage(tokenUsage: unknown): void {
    const last = isObject(tokenUsage) && isObject(tokenUsage.last) ? tokenUsage.last : undefined
    if (!last) return
    this.#requests++
    this.#usage.input += num(last.inputTokens)
    this.#usage.cached += num(last.cachedInputTokens)
    this.#usage.cacheWrite += num(last.cacheWriteInputTokens)
    this.#usage.output += num(last.outputTokens)
  }

  #result(turn: Json): TurnResult {
    const status = str(turn.status)
    const error = isObject(turn.error) ? str(turn.error.message) : undefined
    const errors = [...this.#errors, ...(error ? [error] : [])]
    const isError = status !== 'completed'
    const { input, cached, cacheWrite, output } = this.#usage
    return {
      isError,
      subtype: isError ? 'error_during_execution' : 'success',
      text: this.#answer,
      durationMs: num(turn.durationMs),
      durationApiMs: 0,
      numTurns: this.#requests,
      // Codex reports no cost; the runner sums differences of this.
      cumulativeCostUsd: 0,
      // OpenAI counts cached and cache-written tokens inside input_tokens; the runner's fields count them apart.
      inputTokens: Math.max(0, input - cached - cacheWrite),
      outputTokens: output,
      cacheReadInputTokens: cached,
      cacheCreationInputTokens: cacheWrite,
      ...(this.#model && { model: this.#model }),
      ...(isError && errors.length > 0 && { errors }),
    }
  }
}
