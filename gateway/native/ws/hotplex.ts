import type { ServiceEvent, Stats } from '../../../contract/mod.ts'

/**
 * The `hotplex` dialect of /ws/v1/agent: events as HotPlex's daemon sends them, so
 * clients written for it work unchanged (README "Coming from HotPlex"). `{event, data}`
 * with `data` an object: `{event_type, event_data, meta}` for the stream of a turn,
 * `{message}` for errors, `{version}`, `{session_id, stats}` on completion. The frame
 * also names its `type` and `meta` at the top, which HotPlex's own SDKs read. Pure.
 */

/** A HotPlex event frame. */
export interface HotplexFrame {
  event: string
  type: string
  data: unknown
  meta?: HotplexMeta
  session_id?: string
  seq?: number
  turn_id?: string
  request_id?: number | string
  /** Our error body, beside HotPlex's `data.message`. */
  error?: { code: string; message: string }
}

/** HotPlex's event metadata: the fields its clients read. */
export interface HotplexMeta {
  status?: string
  tool_name?: string
  tool_id?: string
  input_summary?: string
  output_summary?: string
  model?: string
}

/** The summaries HotPlex clients show are short; the full text stays in `event_data`. */
const INPUT_SUMMARY_MAX = 100
const OUTPUT_SUMMARY_MAX = 500

/** Events a HotPlex client never sees: the live deltas (the whole block follows) and the keep-alive pulse. */
const NOT_SENT = new Set<string>(['answer_delta', 'thinking_delta', 'task_boundary'])

/** The HotPlex shape of one of our events; undefined when the dialect does not send it. */
export function toHotplex(event: ServiceEvent): HotplexFrame | undefined {
  if (NOT_SENT.has(event.event)) return undefined
  const frame = (data: unknown, meta?: HotplexMeta): HotplexFrame => ({
    event: event.event,
    type: event.event,
    data,
    ...(meta && { meta }),
    ...(event.session_id !== undefined && { session_id: event.session_id }),
    ...(event.seq !== undefined && { seq: event.seq }),
    ...(event.turn_id !== undefined && { turn_id: event.turn_id }),
    ...(event.request_id !== undefined && { request_id: event.request_id }),
  })
  const withMeta = (text: string, meta: HotplexMeta) => frame({ event_type: event.event, event_data: text, meta }, meta)
  switch (event.event) {
    case 'thinking':
      return withMeta(event.data, { status: 'running' })
    case 'answer':
      return withMeta(event.data, {})
    case 'tool_use':
      return withMeta(event.tool.name, {
        tool_name: event.tool.name,
        tool_id: event.tool.id,
        status: 'running',
        input_summary: summarizeInput(event.tool.input),
      })
    case 'tool_result':
      return withMeta(event.data, {
        ...(event.tool.name !== undefined && { tool_name: event.tool.name }),
        tool_id: event.tool.id,
        status: event.is_error ? 'error' : 'success',
        output_summary: truncate(event.data, OUTPUT_SUMMARY_MAX),
      })
    case 'session_stats':
      return frame(turnSummary(event.session_id, event.turn_stats, event.tools_used, event.is_error))
    case 'completed':
      return frame({ session_id: event.session_id, stats: sessionSummary(event.session_id, event.stats) })
    case 'stats':
      return frame(sessionSummary(event.session_id, event.stats))
    case 'version':
      return frame({ version: event.data, engine: event.engine })
    case 'stopped':
      return frame({ session_id: event.session_id, ...(event.data !== undefined && { reason: event.data }) })
    case 'error':
      // One denied tool call does not end the turn; HotPlex's clients take every `error` for the end, so it is HotPlex's `permission_denied`.
      if (event.tool !== undefined) {
        const meta: HotplexMeta = { tool_name: event.tool.name, ...(event.tool.id !== undefined && { tool_id: event.tool.id }), status: 'error' }
        return {
          ...frame({ event_type: 'permission_denied', event_data: event.error.message, meta }, meta),
          event: 'permission_denied',
          type: 'permission_denied',
          error: event.error,
        }
      }
      return { ...frame({ message: event.error.message, code: event.error.code }), error: event.error }
    default:
      // Steering and the rest: HotPlex's generic shape, so a client reading `data.event_data` finds the text.
      return withMeta('data' in event && typeof event.data === 'string' ? event.data : '', {})
  }
}

/** HotPlex's `session_stats`: one turn's counters under HotPlex's names. */
export function turnSummary(sessionId: string | undefined, stats: Stats, toolsUsed: readonly string[], isError: boolean): Record<string, unknown> {
  return { ...counters(sessionId, stats), tools_used: [...toolsUsed], is_error: isError }
}

/** HotPlex's session stats (`completed.data.stats`, the `stats` reply): the session's counters under its names. */
export function sessionSummary(sessionId: string | undefined, stats: Stats): Record<string, unknown> {
  return { ...counters(sessionId, stats), turns: stats.turns, errors: stats.errors }
}

/** Our counters under HotPlex's names. */
function counters(sessionId: string | undefined, stats: Stats): Record<string, unknown> {
  return {
    session_id: sessionId ?? '',
    total_duration_ms: stats.duration_ms,
    input_tokens: stats.input_tokens,
    output_tokens: stats.output_tokens,
    cache_write_tokens: stats.cache_creation_input_tokens,
    cache_read_tokens: stats.cache_read_input_tokens,
    total_tokens: totalTokens(stats),
    tool_call_count: stats.tool_calls,
    total_cost_usd: stats.total_cost_usd,
    model_used: stats.model ?? '',
  }
}

/** Every token the model read or wrote: fresh input, output, and both cache counts (none is part of another). */
function totalTokens(stats: Stats): number {
  return stats.input_tokens + stats.output_tokens + stats.cache_read_input_tokens + stats.cache_creation_input_tokens
}

/** Fields that say most about a call, in the order they are looked for. */
const SUMMARY_FIELDS = ['command', 'file_path', 'path', 'pattern', 'query', 'url', 'description', 'prompt'] as const

/** A one-line summary of a tool's input: its telling field, else its JSON, cut to 100 characters. */
export function summarizeInput(input: unknown): string {
  if (typeof input === 'string') return truncate(input, INPUT_SUMMARY_MAX)
  if (typeof input !== 'object' || input === null) return input === undefined ? '' : truncate(JSON.stringify(input), INPUT_SUMMARY_MAX)
  const fields = input as Record<string, unknown>
  for (const name of SUMMARY_FIELDS) {
    const value = fields[name]
    if (typeof value === 'string' && value !== '') return truncate(value, INPUT_SUMMARY_MAX)
  }
  return Object.keys(fields).length === 0 ? '' : truncate(JSON.stringify(input), INPUT_SUMMARY_MAX)
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/**
 * A HotPlex client's request as our frame: `system_prompt` is the session's instructions,
 * and the SDKs' `config: {session_id, work_dir, task_instructions}` is read as top-level
 * fields. Anything else is left for the frame schema to judge. Pure.
 */
export function fromHotplexFrame(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw
  const { config, system_prompt: systemPrompt, ...frame } = raw as Record<string, unknown>
  const out: Record<string, unknown> = { ...frame }
  if (typeof config === 'object' && config !== null && !Array.isArray(config)) {
    const { session_id: sessionId, work_dir: workDir, task_instructions: taskInstructions } = config as Record<string, unknown>
    if (out.session_id === undefined && sessionId !== undefined && sessionId !== '') out.session_id = sessionId
    if (out.work_dir === undefined && workDir !== undefined && workDir !== '') out.work_dir = workDir
    if (out.instructions === undefined && taskInstructions !== undefined && taskInstructions !== '') out.instructions = taskInstructions
  } else if (config !== undefined) out.config = config
  // HotPlex gives an execute with an empty session_id a new session, as an absent one gets here.
  if (out.type === 'execute' && out.session_id === '') delete out.session_id
  // HotPlex clients send `system_prompt: null` when they have none.
  if (out.instructions === undefined && systemPrompt !== undefined && systemPrompt !== null && systemPrompt !== '') out.instructions = systemPrompt
  return out
}
