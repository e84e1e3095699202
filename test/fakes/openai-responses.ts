/**
 * A fake OpenAI Responses API, faithful to what the real Codex CLI (0.169.0)
 * and codex-acp send and accept (../shared/reference/codex/): `POST
 * {base}/v1/responses` with `stream: true` answered as SSE (`event:` + `data:`
 * frames: response.created, response.in_progress, output items with their
 * deltas, response.output_item.done with the whole item, response.completed
 * with usage); 404 for anything else. What it answers follows the shared
 * script (model-script.ts); the shell tool call is `exec_command {cmd}`.
 */
import type { ServerResponse } from 'node:http'
import { clientGone, type RecordedRequest, serveFake, streamingPost, stringsIn, waitUnlessGone } from './http-fake.ts'
import { roughTokens, scriptStep, textPieces, type ScriptInput, type ScriptStep } from './model-script.ts'

export type { RecordedRequest } from './http-fake.ts'

export interface FakeResponses {
  /** Base URL the CLI's provider `base_url` takes, with the `/v1` path: `http://127.0.0.1:PORT/v1`. */
  url: string
  /** Every request, in arrival order. */
  requests: RecordedRequest[]
  /** Only the `POST /v1/responses` requests. */
  responseRequests(): RecordedRequest[]
  /** Whether any model request carried `text` in one of its input strings (a prompt, a tool output, a denial reason). */
  saw(text: string): boolean
  /** Make the next model request fail with `status` and an OpenAI error body. */
  failNext(status: number): void
  stop(): Promise<void>
}

type Item = { type?: unknown; role?: unknown; content?: unknown; output?: unknown; [key: string]: unknown }

/** A whole block the CLI adds as a user message (`<environment_context>…</environment_context>`, `<turn_aborted>…`), not the user's words. */
const CONTEXT_BLOCK = /^\s*<([a-z_]+)>[\s\S]*<\/\1>\s*$/

function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return [content]
  if (!Array.isArray(content)) return []
  return content
    .filter((part): part is { text: string } => typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string')
    .map((part) => part.text)
}

/** The user's own words in a user message: its last text that is not a context block; undefined for context-only messages. */
function promptOf(item: Item): string | undefined {
  return textsOf(item.content)
    .filter((text) => !CONTEXT_BLOCK.test(text))
    .at(-1)
}

/** A `function_call_output`'s output: text, or a list of content parts. */
function outputText(output: unknown): string {
  return typeof output === 'string' ? output : textsOf(output).join('\n')
}

/**
 * The conversation of one Responses request as the shared script reads it:
 * prompts from `input` user messages (developer messages and context blocks
 * left out), tool results from the `function_call_output` items after the last prompt.
 */
export function scriptInputOf(body: any): ScriptInput {
  const items: Item[] = Array.isArray(body?.input) ? body.input.filter((i: unknown) => typeof i === 'object' && i !== null) : []
  const prompts: string[] = []
  let toolResults: string[] = []
  for (const item of items) {
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      toolResults.push(outputText(item.output))
      continue
    }
    if ((item.type === 'message' || item.type === undefined) && item.role === 'user') {
      const prompt = promptOf(item)
      if (prompt === undefined) continue
      prompts.push(prompt)
      toolResults = []
    }
  }
  return { prompts, toolResults }
}

/** The SSE events of one model step, as the recordings' fake streamed them and the CLI accepted. */
export function responseEvents(step: ScriptStep, ids: { response: string; n: number; model: string; inputTokens: number }): { event: string; data: object }[] {
  const events: { event: string; data: object }[] = []
  const push = (type: string, fields: object) => events.push({ event: type, data: { type, ...fields } })
  const output: object[] = []
  const started = { id: ids.response, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'in_progress', model: ids.model, output: [] }
  push('response.created', { response: started })
  push('response.in_progress', { response: started })

  const addItem = (item: { id: string; [key: string]: unknown }, stream: (index: number) => void, done: object) => {
    const index = output.length
    push('response.output_item.added', { output_index: index, item })
    stream(index)
    push('response.output_item.done', { output_index: index, item: done })
    output.push(done)
  }
  if (step.thinking !== undefined) {
    const thinking = step.thinking
    const id = `rs_fake_${ids.n}`
    addItem(
      { id, type: 'reasoning', summary: [] },
      (index) => {
        const at = { item_id: id, output_index: index, summary_index: 0 }
        push('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } })
        for (const delta of textPieces(thinking)) push('response.reasoning_summary_text.delta', { ...at, delta })
        push('response.reasoning_summary_text.done', { ...at, text: thinking })
        push('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: thinking } })
      },
      { id, type: 'reasoning', summary: [{ type: 'summary_text', text: thinking }] },
    )
  }
  if (step.text !== '') {
    const id = `msg_fake_${ids.n}`
    addItem(
      { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      (index) => {
        const at = { item_id: id, output_index: index, content_index: 0 }
        push('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } })
        for (const delta of textPieces(step.text)) push('response.output_text.delta', { ...at, delta })
        push('response.output_text.done', { ...at, text: step.text })
        push('response.content_part.done', { ...at, part: { type: 'output_text', text: step.text, annotations: [] } })
      },
      { id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: step.text, annotations: [] }] },
    )
  }
  if (step.toolCommand !== undefined) {
    const id = `fc_fake_${ids.n}`
    const call = { id, type: 'function_call', name: 'exec_command', call_id: `call_fake_${ids.n}` }
    const args = JSON.stringify({ cmd: step.toolCommand, yield_time_ms: 10000 })
    addItem(
      { ...call, arguments: '', status: 'in_progress' },
      (index) => {
        for (const delta of textPieces(args, 20)) push('response.function_call_arguments.delta', { item_id: id, output_index: index, delta })
        push('response.function_call_arguments.done', { item_id: id, output_index: index, arguments: args })
      },
      { ...call, arguments: args, status: 'completed' },
    )
  }
  const outputTokens = roughTokens(JSON.stringify(output).length)
  const usage = {
    input_tokens: ids.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: ids.inputTokens + outputTokens,
  }
  push('response.completed', { response: { ...started, status: 'completed', output, usage } })
  return events
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null, param: null } }))
}

/** Starts the fake on 127.0.0.1. */
export async function startFakeResponses(options: { port?: number } = {}): Promise<FakeResponses> {
  const failures: number[] = []
  let counter = 0

  async function stream(res: ServerResponse, record: RecordedRequest, body: any, inputTokens: number) {
    const gone = clientGone(res, record)
    const n = ++counter
    const step = scriptStep(scriptInputOf(body))
    const model = typeof body.model === 'string' ? body.model : 'gpt-5.5'
    const events = responseEvents(step, { response: `resp_fake_${n}`, n, model, inputTokens })
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': `req_fake_${n}`,
    })
    const send = (e: { event: string; data: object }) => {
      if (!gone()) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`)
    }
    // response.created and .in_progress first, then the wait of `slow:`, then the rest.
    events.slice(0, 2).forEach(send)
    if (step.delayMs) await waitUnlessGone(step.delayMs, gone)
    events.slice(2).forEach(send)
    if (!gone()) res.end()
  }

  const { port, requests, stop } = await serveFake({
    port: options.port,
    sendError,
    handle: streamingPost('/v1/responses', failures, sendError, (res, record, raw) => stream(res, record, record.body, roughTokens(raw.length))),
  })
  const responseRequests = () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/responses')
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    responseRequests,
    saw: (text) => responseRequests().some((r) => [...stringsIn(r.body?.input)].some((s) => s.includes(text))),
    failNext: (status) => void failures.push(status),
    stop,
  }
}
