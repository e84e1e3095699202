/**
 * Turns one stdout line of `claude -p --output-format stream-json --verbose`
 * into EngineOutput items. Pure and total: whatever the line, it returns an
 * array and never throws. Shapes follow the recordings of Claude Code 2.1.110,
 * 2.1.197 and 2.1.330 (see test/fixtures/claude-code/).
 */
import type { EngineOutput, TurnResult } from '../engine.ts'
import { isControlType, type Obj } from './control.ts'

/** How much of an unparseable line is kept in a `noise` item. */
export const NOISE_MAX_CHARS = 200

/**
 * Maps one stream-json line to zero or more EngineOutput items. A line of the
 * control protocol (control.ts) makes none; it goes to `onControl` instead,
 * parsed, so every line is parsed once.
 */
export function parseClaudeLine(line: string, onControl?: (message: Obj) => void): EngineOutput[] {
  let parsed: EngineOutput[] | Obj
  try {
    parsed = parseLine(line)
  } catch {
    // Only reachable through engine bugs or exotic inputs (e.g. a JSON.parse
    // stack overflow); a line must never take the session down.
    return [noise(line)]
  }
  if (Array.isArray(parsed)) return parsed
  // Outside the catch: a tool gate that fails must not pass for a noisy line.
  onControl?.(parsed)
  return []
}

/** The outputs of a line, or the message itself when it is one of the control protocol. */
function parseLine(line: string): EngineOutput[] | Obj {
  if (typeof line !== 'string') return [noise(String(line))]
  const trimmed = line.trim()
  if (trimmed === '') return []
  // Every stream-json message is an object: skip JSON.parse for anything else
  // (cheap on a 10 MB line of garbage).
  if (trimmed[0] !== '{') return [noise(line)]
  let value: unknown
  try {
    value = JSON.parse(trimmed)
  } catch {
    return [noise(line)]
  }
  if (!isObj(value) || typeof value.type !== 'string') return [noise(line)]
  if (isControlType(value.type)) return value
  switch (value.type) {
    case 'system':
      return value.subtype === 'init' ? [parseInit(value)] : []
    case 'assistant':
      return parseAssistant(value)
    case 'user':
      return parseUser(value)
    case 'result':
      return [{ kind: 'result', result: parseResult(value) }]
    case 'stream_event':
      return parseStreamEvent(value)
    default:
      // rate limit events, future types…
      return []
  }
}

function parseInit(msg: Obj): EngineOutput {
  const out: { kind: 'init'; cliSessionId?: string; model?: string; version?: string } = { kind: 'init' }
  const sessionId = str(msg.session_id)
  const model = str(msg.model)
  const version = str(msg.claude_code_version)
  if (sessionId !== undefined) out.cliSessionId = sessionId
  if (model !== undefined) out.model = model
  if (version !== undefined) out.version = version
  return out
}

/** One item per content block; blocks of one API message share `message.id`. */
function parseAssistant(msg: Obj): EngineOutput[] {
  const message = msg.message
  if (!isObj(message)) return []
  const messageId = str(message.id)
  const withId = messageId === undefined ? {} : { messageId }
  const content = message.content
  // The API always sends an array; a bare string is tolerated as one text block.
  if (typeof content === 'string') return [{ kind: 'text', text: content, ...withId }]
  if (!Array.isArray(content)) return []
  const out: EngineOutput[] = []
  for (const block of content) {
    if (!isObj(block)) continue
    switch (block.type) {
      case 'thinking':
        out.push({ kind: 'thinking', text: str(block.thinking) ?? '', ...withId })
        break
      case 'text':
        // API error messages (`is_api_error_message`, model `<synthetic>`) are
        // plain text blocks too: kept, so the user sees why the turn failed.
        out.push({ kind: 'text', text: str(block.text) ?? '', ...withId })
        break
      case 'tool_use':
        out.push({
          kind: 'tool_use',
          id: str(block.id) ?? '',
          name: str(block.name) ?? '',
          input: block.input ?? {},
          ...withId,
        })
        break
      default:
        // redacted_thinking, server tool blocks, …: nothing to show.
        break
    }
  }
  return out
}

/**
 * With `--include-partial-messages`: the model API's stream events, one per line. Only text and
 * thinking deltas are kept (the whole block follows as an `assistant` line); the API message id is
 * `api_message_id` (2.1.330), else unknown.
 */
function parseStreamEvent(msg: Obj): EngineOutput[] {
  const event = msg.event
  if (!isObj(event) || event.type !== 'content_block_delta' || !isObj(event.delta)) return []
  const messageId = str(msg.api_message_id)
  const withId = messageId === undefined ? {} : { messageId }
  const { delta } = event
  if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') return [{ kind: 'text_delta', text: delta.text, ...withId }]
  if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '')
    return [{ kind: 'thinking_delta', text: delta.thinking, ...withId }]
  // signature_delta, input_json_delta (the tool_use line has the whole input), citations…
  return []
}

/** Only tool results matter; echoed prompts and interrupt markers are skipped. */
function parseUser(msg: Obj): EngineOutput[] {
  const message = msg.message
  if (!isObj(message) || !Array.isArray(message.content)) return []
  const out: EngineOutput[] = []
  for (const block of message.content) {
    if (!isObj(block) || block.type !== 'tool_result') continue
    out.push({
      kind: 'tool_result',
      toolUseId: str(block.tool_use_id) ?? '',
      content: contentText(block.content),
      isError: block.is_error === true,
    })
  }
  return out
}

/** Tool result content is a string or an array of blocks; keeps the text ones. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  const parts: string[] = []
  for (const block of content) {
    if (typeof block === 'string') parts.push(block)
    else if (isObj(block) && block.type === 'text' && typeof block.text === 'string') parts.push(block.text)
  }
  return parts.join('\n')
}

function parseResult(msg: Obj): TurnResult {
  const usage = isObj(msg.usage) ? msg.usage : {}
  const result: TurnResult = {
    isError: msg.is_error === true,
    subtype: str(msg.subtype) ?? '',
    text: str(msg.result) ?? '',
    durationMs: num(msg.duration_ms),
    durationApiMs: num(msg.duration_api_ms),
    numTurns: num(msg.num_turns),
    cumulativeCostUsd: num(msg.total_cost_usd),
    inputTokens: num(usage.input_tokens),
    outputTokens: num(usage.output_tokens),
    cacheReadInputTokens: num(usage.cache_read_input_tokens),
    cacheCreationInputTokens: num(usage.cache_creation_input_tokens),
  }
  if (isObj(msg.modelUsage)) {
    // One key per model used; the first is the main one.
    for (const key in msg.modelUsage) {
      result.model = key
      break
    }
  }
  if (typeof msg.api_error_status === 'number' && Number.isFinite(msg.api_error_status)) {
    result.apiErrorStatus = msg.api_error_status
  }
  if (Array.isArray(msg.errors)) {
    result.errors = msg.errors.map((e) => (typeof e === 'string' ? e : safeStringify(e)))
  }
  if (result.isError && /no conversation found/i.test(result.text || result.errors?.join('; ') || result.subtype)) result.conversationNotFound = true
  return result
}

/** Whether a stderr line is the CLI refusing `--session-id` for a conversation it has stored already. */
export function isConversationInUse(line: string): boolean {
  return /already in use/i.test(line)
}

function noise(line: string): EngineOutput {
  if (line.length <= NOISE_MAX_CHARS) return { kind: 'noise', line }
  // Do not cut a surrogate pair in half.
  const high = line.charCodeAt(NOISE_MAX_CHARS - 1)
  const end = high >= 0xd800 && high <= 0xdbff ? NOISE_MAX_CHARS - 1 : NOISE_MAX_CHARS
  return { kind: 'noise', line: line.slice(0, end) + '…' }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}

function safeStringify(v: unknown): string {
  try {
    return String(JSON.stringify(v)).slice(0, NOISE_MAX_CHARS)
  } catch {
    return ''
  }
}
