/**
 * A fake Anthropic Messages API, faithful to what the real Claude Code CLI
 * needs to run offline: streaming (SSE) and plain JSON answers from
 * `POST /v1/messages`, `POST /v1/messages/count_tokens`, and 404 for anything
 * else. What it answers is scripted by the last user message (see `scriptReply`).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One HTTP request the fake received, body already parsed (undefined if not JSON). */
export interface RecordedRequest {
  method: string
  /** Path with query, e.g. `/v1/messages?beta=true`. */
  url: string
  path: string
  headers: IncomingHttpHeaders
  body: any
  receivedAt: number
  /** The status the fake answered with. */
  status?: number
  /** True when the client went away before the answer was complete (e.g. an interrupt). */
  disconnected: boolean
}

export interface FakeAnthropicOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number
  /** Model name put in answers when the request names none. */
  model?: string
}

export interface FakeAnthropic {
  /** Base URL for ANTHROPIC_BASE_URL, e.g. `http://127.0.0.1:41234`. */
  url: string
  /** Every request, in arrival order. */
  requests: RecordedRequest[]
  /** Only the `POST /v1/messages` requests (streaming or not). */
  messageRequests(): RecordedRequest[]
  /** The system prompt text of the last `/v1/messages` request, blocks joined by newlines. */
  lastSystemPrompt(): string | undefined
  /**
   * Make the next model request fail with `status` and an Anthropic error body.
   * By default the answer carries `x-should-retry: false`, which the CLI obeys,
   * so one call fails the turn at once; `retryable: true` lets the CLI retry
   * (with CLAUDE_CODE_MAX_RETRIES=1 a turn then needs `times: 2` to fail).
   */
  failNext(status: number, options?: FailOptions): void
  stop(): Promise<void>
}

export interface FailOptions {
  /** How many requests in a row fail; default 1. */
  times?: number
  /** Let the client retry (no `x-should-retry: false`); default false. */
  retryable?: boolean
}

/** A content block of an answer. */
export type ReplyBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

/** What the fake decides to answer to one request. */
export interface Reply {
  blocks: ReplyBlock[]
  stopReason: 'end_turn' | 'tool_use'
  /** Wait this long (ms) after message_start before streaming the blocks. */
  delayMs?: number
}

const DEFAULT_MODEL = 'claude-opus-5-5'
/** Step of the `slow:` wait; the wait ends early within one step when the client disconnects. */
const WAIT_STEP_MS = 25
/** The real API sends a ping now and then on long streams. */
const PING_EVERY_MS = 1000

type ContentBlock = { type?: unknown; text?: unknown; content?: unknown; [key: string]: unknown }
type Message = { role?: unknown; content?: unknown }

function blocksOf(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (Array.isArray(content)) return content.filter((b): b is ContentBlock => typeof b === 'object' && b !== null)
  return []
}

function isReminder(text: string): boolean {
  return text.trimStart().startsWith('<system-reminder>')
}

/** The user's own words in a message: its last text block that is not a `<system-reminder>`. */
export function promptOf(message: Message): string | undefined {
  const texts = blocksOf(message.content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string' && !isReminder(b.text))
    .map((b) => b.text as string)
  return texts.at(-1)
}

/** The text of a tool_result block, whose content is a string or a list of blocks. */
function toolResultText(block: ContentBlock): string {
  if (typeof block.content === 'string') return block.content
  return blocksOf(block.content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n')
}

/** The text of a `system` field: a string or a list of text blocks. */
export function systemText(system: unknown): string | undefined {
  if (system === undefined || system === null) return undefined
  if (typeof system === 'string') return system
  return blocksOf(system)
    .filter((b) => typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n')
}

function userMessages(body: any): Message[] {
  const messages: unknown[] = Array.isArray(body?.messages) ? body.messages : []
  return messages.filter((m): m is Message => typeof m === 'object' && m !== null && (m as Message).role === 'user')
}

/**
 * The scripted behaviour, decided by the last user message:
 * tool_result → `Done. The tool said: …`; `run: CMD` → thinking, text and a Bash
 * tool_use; `run-b64: BASE64` → the same with the decoded command (a command
 * the model writes by itself: the prompt does not spell it); `recall` → the
 * earlier prompts; `slow: MS` → wait, then `slow done`; `ask: QUESTION | A | B`
 * → an AskUserQuestion tool_use with those options (Claude Code's own tool for
 * asking the user); anything else → `Echo: <prompt>`.
 */
export function scriptReply(body: any, nextToolId: () => string): Reply {
  const users = userMessages(body)
  const last = users.at(-1)
  if (!last) return { blocks: [{ type: 'text', text: 'Echo: ' }], stopReason: 'end_turn' }

  const results = blocksOf(last.content).filter((b) => b.type === 'tool_result')
  if (results.length > 0) {
    const said = results.map(toolResultText).join('\n')
    return { blocks: [{ type: 'text', text: `Done. The tool said: ${said}` }], stopReason: 'end_turn' }
  }

  const prompt = promptOf(last) ?? ''
  const encoded = /run-b64: (\S+)/.exec(prompt)
  const run = /run: (.*)$/m.exec(prompt)
  if (encoded || run) {
    const command = encoded ? Buffer.from(encoded[1] ?? '', 'base64').toString('utf8') : (run?.[1] ?? '').trim()
    return {
      blocks: [
        { type: 'thinking', thinking: 'The user wants me to run a command. I will use Bash.', signature: 'fakesig' },
        { type: 'text', text: 'Let me run a command.' },
        { type: 'tool_use', id: nextToolId(), name: 'Bash', input: { command, description: 'Run command' } },
      ],
      stopReason: 'tool_use',
    }
  }

  const ask = /ask: (.*)$/m.exec(prompt)
  if (ask) {
    const [question = '', ...labels] = (ask[1] ?? '').split('|').map((part) => part.trim())
    const options = labels.map((label) => ({ label, description: `Choose ${label}` }))
    return {
      blocks: [
        { type: 'text', text: 'I need to ask you something.' },
        { type: 'tool_use', id: nextToolId(), name: 'AskUserQuestion', input: { questions: [{ question, header: 'Choice', options, multiSelect: false }] } },
      ],
      stopReason: 'tool_use',
    }
  }

  if (prompt.includes('recall')) {
    const earlier = users
      .slice(0, -1)
      .map(promptOf)
      .filter((p): p is string => p !== undefined)
    const listed = earlier.length > 0 ? earlier.join(' | ') : '(none)'
    return { blocks: [{ type: 'text', text: `Earlier prompts: ${listed}` }], stopReason: 'end_turn' }
  }

  const slow = /slow: (\d+)/.exec(prompt)
  if (slow) {
    return { blocks: [{ type: 'text', text: 'slow done' }], stopReason: 'end_turn', delayMs: Number(slow[1]) }
  }

  return { blocks: [{ type: 'text', text: `Echo: ${prompt}` }], stopReason: 'end_turn' }
}

/** A rough token count, about four characters a token as for English text. */
function tokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4))
}

function outputTokens(blocks: ReplyBlock[]): number {
  return tokens(JSON.stringify(blocks).length)
}

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
}

function sendError(res: ServerResponse, status: number, message: string, requestId: string, retryable = true): void {
  const type = errorTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  const headers: Record<string, string> = { 'content-type': 'application/json', 'request-id': requestId }
  if (!retryable) headers['x-should-retry'] = 'false'
  res.writeHead(status, headers)
  res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }))
}

/** Splits text into small pieces so that answers stream as several deltas. */
function pieces(text: string, size = 12): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length > 0 ? out : ['']
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Starts the fake on 127.0.0.1. */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = []
  const failures: { status: number; retryable: boolean }[] = []
  let counter = 0
  let toolCounter = 0
  const nextToolId = () => `toolu_fake_${++toolCounter}`

  async function streamReply(
    res: ServerResponse,
    record: RecordedRequest,
    reply: Reply,
    ids: { id: string; requestId: string },
    model: string,
    inputTokens: number,
  ) {
    const { id, requestId } = ids
    let closed = false
    res.once('close', () => {
      if (!res.writableFinished) {
        closed = true
        record.disconnected = true
      }
    })
    const send = (event: string, data: unknown) => {
      if (!closed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': requestId,
    })
    const usage = { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 }
    send('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage },
    })
    send('ping', { type: 'ping' })

    if (reply.delayMs) {
      const until = Date.now() + reply.delayMs
      let nextPing = Date.now() + PING_EVERY_MS
      while (!closed && Date.now() < until) {
        await sleep(Math.min(WAIT_STEP_MS, until - Date.now()))
        if (Date.now() >= nextPing) {
          send('ping', { type: 'ping' })
          nextPing += PING_EVERY_MS
        }
      }
      if (closed) return
    }

    reply.blocks.forEach((block, index) => {
      if (block.type === 'thinking') {
        send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } })
        for (const p of pieces(block.thinking)) {
          send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: p } })
        }
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } })
      } else if (block.type === 'text') {
        send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
        for (const p of pieces(block.text)) {
          send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } })
        }
      } else {
        send('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        })
        for (const p of pieces(JSON.stringify(block.input), 20)) {
          send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } })
        }
      }
      send('content_block_stop', { type: 'content_block_stop', index })
    })
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: reply.stopReason, stop_sequence: null },
      usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens(reply.blocks) },
    })
    send('message_stop', { type: 'message_stop' })
    if (!closed) res.end()
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    const url = req.url ?? '/'
    const path = url.split('?')[0] ?? '/'
    let body: any
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined
    } catch {
      body = undefined
    }
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      url,
      path,
      headers: req.headers,
      body,
      receivedAt: Date.now(),
      disconnected: false,
    }
    requests.push(record)
    const n = ++counter
    const requestId = `req_fake_${n}`
    res.once('close', () => (record.status = res.statusCode))

    const isMessages = req.method === 'POST' && path === '/v1/messages'
    const isCount = req.method === 'POST' && path === '/v1/messages/count_tokens'
    if (!isMessages && !isCount) return sendError(res, 404, `Not found: ${req.method} ${path}`, requestId)
    if (raw.length > 0 && body === undefined) return sendError(res, 400, 'The request body is not valid JSON', requestId)

    const inputTokens = tokens(raw.length)
    if (isCount) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId })
      return res.end(JSON.stringify({ input_tokens: inputTokens }))
    }

    const failure = failures.shift()
    if (failure) return sendError(res, failure.status, `fake failure ${failure.status}`, requestId, failure.retryable)

    const reply = scriptReply(body, nextToolId)
    const model = typeof body?.model === 'string' ? body.model : (options.model ?? DEFAULT_MODEL)
    const id = `msg_fake_${n}`
    if (body?.stream === true) return streamReply(res, record, reply, { id, requestId }, model, inputTokens)

    if (reply.delayMs) {
      let gone = false
      res.once('close', () => (gone = !res.writableFinished))
      const until = Date.now() + reply.delayMs
      while (!gone && Date.now() < until) await sleep(Math.min(WAIT_STEP_MS, until - Date.now()))
      if (gone) {
        record.disconnected = true
        return
      }
    }
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId })
    res.end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: reply.blocks,
        stop_reason: reply.stopReason,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens(reply.blocks) },
      }),
    )
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, `fake crashed: ${String(err)}`, 'req_fake_crash')
        else res.destroy()
      })
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  const messageRequests = () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages')
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messageRequests,
    lastSystemPrompt: () => systemText(messageRequests().at(-1)?.body?.system),
    failNext(status, { times = 1, retryable = false } = {}) {
      for (let i = 0; i < times; i++) failures.push({ status, retryable })
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
