/**
 * A fake OpenAI-compatible Chat Completions API, faithful to what the real
 * OpenCode CLI (1.18.33, custom provider `@ai-sdk/openai-compatible`) sends
 * and accepts (recordings in test/fakes/recordings/opencode-1.18.33): `POST
 * {base}/chat/completions` with `stream: true` and `stream_options.include_usage`,
 * answered as SSE `data:` chunks (`reasoning_content` and `content` deltas,
 * `tool_calls` deltas, a finish reason, a last chunk with `usage`, `[DONE]`);
 * 404 for anything else. What it answers follows the shared script
 * (model-script.ts); the shell tool call is OpenCode's `bash {command, description}`.
 * OpenCode also asks for a session title once (a request without tools): it gets `Fake title`.
 */
import type { ServerResponse } from 'node:http'
import { clientGone, type RecordedRequest, serveFake, streamingPost, waitUnlessGone } from './http-fake.ts'
import { roughTokens, scriptStep, textPieces, type ScriptInput, type ScriptStep } from './model-script.ts'

export type { RecordedRequest } from './http-fake.ts'

export interface FakeChat {
  /** Base URL the provider's `options.baseURL` takes, with the `/v1` path: `http://127.0.0.1:PORT/v1`. */
  url: string
  /** Every request, in arrival order. */
  requests: RecordedRequest[]
  /** Only the `POST /v1/chat/completions` requests. */
  chatRequests(): RecordedRequest[]
  /** Whether any model request carried `text` in one of its messages (a prompt, a tool output, a denial reason). */
  saw(text: string): boolean
  /** Make the next model request fail with `status` and an OpenAI error body. */
  failNext(status: number): void
  stop(): Promise<void>
}

/** What the fake answers OpenCode's title request. */
export const FAKE_TITLE = 'Fake title'
/** The user message OpenCode's title request puts before the prompt. */
const TITLE_REQUEST = /^Generate a title for this conversation/

type Message = { role?: unknown; content?: unknown; [key: string]: unknown }

/** A message's text: a string, or the text parts of a list. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((part): part is { text: string } => typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string')
    .map((part) => part.text)
    .join('\n')
}

function messagesOf(body: any): Message[] {
  return Array.isArray(body?.messages) ? body.messages.filter((m: unknown): m is Message => typeof m === 'object' && m !== null) : []
}

/**
 * The conversation of one Chat Completions request as the shared script reads
 * it: prompts from `user` messages (the title request's instruction left
 * out), tool results from the `tool` messages after the last prompt.
 */
export function scriptInputOf(body: any): ScriptInput {
  const prompts: string[] = []
  let toolResults: string[] = []
  for (const message of messagesOf(body)) {
    if (message.role === 'tool') toolResults.push(textOf(message.content))
    if (message.role !== 'user') continue
    const text = textOf(message.content)
    if (TITLE_REQUEST.test(text)) continue
    prompts.push(text)
    toolResults = []
  }
  return { prompts, toolResults }
}

/** Whether a request is OpenCode's title request: it offers no tools. */
export function isTitleRequest(body: any): boolean {
  return !Array.isArray(body?.tools) || body.tools.length === 0
}

/** The `data:` chunks of one model step (before `[DONE]`), as OpenCode accepted them. */
export function chatChunks(step: ScriptStep, ids: { completion: string; n: number; model: string; inputTokens: number }): object[] {
  const created = Math.floor(Date.now() / 1000)
  const chunk = (delta: object, finish: string | null = null) => ({
    id: ids.completion,
    object: 'chat.completion.chunk',
    created,
    model: ids.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })
  const chunks: object[] = [chunk({ role: 'assistant', content: '' })]
  if (step.thinking !== undefined) for (const piece of textPieces(step.thinking)) chunks.push(chunk({ reasoning_content: piece }))
  if (step.text !== '') for (const piece of textPieces(step.text)) chunks.push(chunk({ content: piece }))
  let output = (step.thinking ?? '') + step.text
  if (step.toolCommand !== undefined) {
    const args = JSON.stringify({ command: step.toolCommand, description: 'Run the command' })
    output += args
    chunks.push(chunk({ tool_calls: [{ index: 0, id: `call_fake_${ids.n}`, type: 'function', function: { name: 'bash', arguments: '' } }] }))
    for (const piece of textPieces(args, 20)) chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }))
  }
  chunks.push(chunk({}, step.toolCommand !== undefined ? 'tool_calls' : 'stop'))
  const completionTokens = roughTokens(output.length)
  chunks.push({
    id: ids.completion,
    object: 'chat.completion.chunk',
    created,
    model: ids.model,
    choices: [],
    usage: { prompt_tokens: ids.inputTokens, completion_tokens: completionTokens, total_tokens: ids.inputTokens + completionTokens },
  })
  return chunks
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null, param: null } }))
}

/** Starts the fake on 127.0.0.1. */
export async function startFakeChat(options: { port?: number } = {}): Promise<FakeChat> {
  const failures: number[] = []
  let counter = 0

  async function stream(res: ServerResponse, record: RecordedRequest, body: any, inputTokens: number) {
    const gone = clientGone(res, record)
    const n = ++counter
    const step: ScriptStep = isTitleRequest(body) ? { text: FAKE_TITLE } : scriptStep(scriptInputOf(body))
    const model = typeof body.model === 'string' ? body.model : 'fake-model'
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': `req_fake_${n}`,
    })
    if (step.delayMs) await waitUnlessGone(step.delayMs, gone)
    for (const chunk of chatChunks(step, { completion: `chatcmpl-fake-${n}`, n, model, inputTokens })) {
      if (!gone()) res.write(`data: ${JSON.stringify(chunk)}\n\n`)
    }
    if (!gone()) res.end('data: [DONE]\n\n')
  }

  const { port, requests, stop } = await serveFake({
    port: options.port,
    sendError,
    handle: streamingPost('/v1/chat/completions', failures, sendError, (res, record, raw) => stream(res, record, record.body, roughTokens(raw.length))),
  })
  const chatRequests = () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions')
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests,
    saw: (text) => chatRequests().some((r) => messagesOf(r.body).some((m) => textOf(m.content).includes(text))),
    failNext: (status) => void failures.push(status),
    stop,
  }
}
