import type { Stats } from '../../../contract/mod.ts'
import type { NamedError } from '../schemas/session.ts'
import type { Tokens, ToolPart } from '../schemas/message.ts'

/** Pure helpers that turn native event fields into OpenCode part fields. */

const TITLE_FIELDS = ['description', 'command', 'file_path', 'path', 'pattern', 'url', 'query'] as const
const TITLE_MAX = 120

/** OpenCode tool input is an object; anything else is wrapped as `{input}`. */
export function toolInput(input: unknown): Record<string, unknown> {
  if (input === undefined || input === null) return {}
  if (typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>
  return { input }
}

/** A one-line title for a tool call: its description, command, path…, else the tool's name. */
export function toolTitle(name: string, input: Record<string, unknown>): string {
  for (const field of TITLE_FIELDS) {
    const value = input[field]
    if (typeof value === 'string' && value.trim() !== '') {
      const line = value.trim().split('\n')[0]!
      return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line
    }
  }
  return name
}

export function zeroTokens(): Tokens {
  return { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
}

/** A turn's token counters in OpenCode's shape. */
export function tokensOf(stats: Stats): Tokens {
  const cache = { read: stats.cache_read_input_tokens, write: stats.cache_creation_input_tokens }
  return {
    total: stats.input_tokens + stats.output_tokens + cache.read + cache.write,
    input: stats.input_tokens,
    output: stats.output_tokens,
    reasoning: 0,
    cache,
  }
}

/** The tool part in its final state; a tool that never reported back ends in `error`. */
export function finishTool(part: ToolPart, end: number, outcome: { output: string; isError: boolean }): ToolPart {
  const { input } = part.state
  const start = part.state.status === 'running' ? part.state.time.start : end
  const state: ToolPart['state'] = outcome.isError
    ? { status: 'error', input, error: outcome.output, metadata: {}, time: { start, end } }
    : { status: 'completed', input, output: outcome.output, title: toolTitle(part.tool, input), metadata: {}, time: { start, end } }
  return { ...part, state }
}

/** The OpenCode error an aborted or failed turn's assistant message carries. */
export function turnError(end: 'stopped' | 'error', message: string, code?: string): NamedError {
  if (end === 'stopped') return { name: 'MessageAbortedError', data: { message } }
  return { name: 'UnknownError', data: code === undefined ? { message } : { message, code } }
}
