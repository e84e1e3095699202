import type { ServiceEvent } from '../../contract/events.ts'
import type { Stats } from '../../contract/stats.ts'
import { blockRest, textBlock } from '../blocks.ts'

/** Where the CLI writes: the answer on `out` (so `agent-runtime run … > file` keeps only it), everything else on `err`. */
export interface Outputs {
  out(text: string): void
  err(text: string): void
}

/** Longest tool output shown, in characters; the rest is counted. */
const TOOL_OUTPUT_CHARS = 2_000

/**
 * Prints a turn's events as a person reads them: the answer as it streams,
 * thinking, tool calls with their input and output, errors and the turn's
 * totals. Keeps what a block's pieces already showed, so the whole block
 * that follows adds only the rest.
 */
export class EventPrinter {
  readonly #outputs: Outputs
  readonly #shown = { answer: '', thinking: '' }

  constructor(outputs: Outputs) {
    this.#outputs = outputs
  }

  print(event: ServiceEvent): void {
    const { out, err } = this.#outputs
    const block = textBlock(event)
    if (block !== undefined) {
      const write = block.kind === 'answer' ? out : err
      const start = block.kind === 'thinking' && this.#shown.thinking === '' ? 'thinking: ' : ''
      if (block.piece) {
        write(start + block.text)
        this.#shown[block.kind] += block.text
      } else {
        write(start + blockRest(this.#shown[block.kind], block.text) + '\n')
        this.#shown[block.kind] = ''
      }
      return
    }
    switch (event.event) {
      case 'tool_use':
        err(`tool ${event.tool.name} ${JSON.stringify(event.tool.input)}\n`)
        return
      case 'tool_result':
        err(`${event.is_error ? 'tool failed' : 'tool output'}: ${clip(event.data)}\n`)
        return
      case 'error':
        err(`error ${event.error.code}: ${event.error.message}\n`)
        return
      case 'stopped':
        err(`stopped${event.data ? `: ${event.data}` : ''}\n`)
        return
      case 'completed':
        err(`completed: ${summary(event.turn_stats)}\n`)
        return
      case 'permission_resolved':
        err(
          `permission ${event.decision.replace('_', ' ')} (${resolvedBy(event.source, event.by)}${event.rule ? `, rule ${event.rule}` : ''})${event.tool ? `: ${event.tool.name}` : ''}\n`,
        )
        return
      case 'question_resolved':
        err(`${event.answers ? `answered ${JSON.stringify(event.answers)}` : 'question rejected'} (${resolvedBy(event.source, event.by)})\n`)
        return
      case 'task_boundary':
        return
      default:
        return
    }
  }
}

function resolvedBy(source: string, by: string | undefined): string {
  return by === undefined ? source : `${source}, by ${by}`
}

function clip(text: string): string {
  const trimmed = text.trimEnd()
  return trimmed.length <= TOOL_OUTPUT_CHARS ? trimmed : `${trimmed.slice(0, TOOL_OUTPUT_CHARS)}… (${trimmed.length - TOOL_OUTPUT_CHARS} more characters)`
}

/** A turn's totals on one line. */
export function summary(stats: Stats): string {
  const parts = [
    `${stats.input_tokens} in / ${stats.output_tokens} out tokens`,
    `$${stats.total_cost_usd.toFixed(4)}`,
    `${(stats.duration_ms / 1000).toFixed(1)} s`,
  ]
  if (stats.tool_calls > 0) parts.push(`${stats.tool_calls} tool call${stats.tool_calls === 1 ? '' : 's'}`)
  if (stats.model) parts.push(stats.model)
  return parts.join(', ')
}
