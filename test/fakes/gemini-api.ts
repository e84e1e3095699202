/**
 * A fake Gemini API, faithful to what the real Gemini CLI (0.61.0, headless
 * and `--acp`) sends and accepts (../shared/reference/gemini-cli/):
 * `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` answered as SSE
 * (`data: <GenerateContentResponse>\r\n\r\n`: a thought part, text pieces, then
 * the function call with `finishReason` and `usageMetadata` on the last
 * chunk); `POST /v1beta/models/{model}:generateContent` for the model router
 * of model `auto` (a JSON complexity score); 404 for anything else. What it
 * answers follows the shared script (model-script.ts); the shell tool call is
 * `run_shell_command {command}`.
 */
import type { ServerResponse } from 'node:http'
import { clientGone, type RecordedRequest as HttpRequest, serveFake, stringsIn, waitUnlessGone } from './http-fake.ts'
import { roughTokens, scriptStep, textPieces, type ScriptInput, type ScriptStep } from './model-script.ts'

/** One HTTP request the fake received, with the model route it named. */
export interface RecordedRequest extends HttpRequest {
  /** `streamGenerateContent`, `generateContent`, … ; undefined for other paths. */
  action: string | undefined
  model: string | undefined
}

export interface FakeGemini {
  /** Base URL for GOOGLE_GEMINI_BASE_URL (no path: the CLI appends `/v1beta/models/…`). */
  url: string
  requests: RecordedRequest[]
  /** Only the `streamGenerateContent` requests (the model steps; router calls left out). */
  streamRequests(): RecordedRequest[]
  /** Whether any model step's `contents` carried `text` in one of its strings (a prompt, a tool output, a denial). */
  saw(text: string): boolean
  /** Make the next model step fail with `status` and a Google API error body. */
  failNext(status: number): void
  stop(): Promise<void>
}

type Part = { text?: unknown; thought?: unknown; functionCall?: unknown; functionResponse?: { response?: unknown } }
type Content = { role?: unknown; parts?: unknown }

/** A part the CLI adds to the first user content (`<session_context>…</session_context>`), not the user's words. */
const CONTEXT_BLOCK = /^\s*<([a-z_]+)>[\s\S]*<\/\1>\s*$/

function partsOf(content: Content): Part[] {
  return Array.isArray(content.parts) ? content.parts.filter((p): p is Part => typeof p === 'object' && p !== null) : []
}

/** A functionResponse's text: its `output` (`<untrusted_context>\nOutput: …`), else its `error`, else the JSON of the response. */
function responseText(part: Part): string {
  const response = part.functionResponse?.response as Record<string, unknown> | undefined
  if (typeof response?.output === 'string') return response.output
  if (typeof response?.error === 'string') return response.error
  return JSON.stringify(response ?? {})
}

/**
 * The conversation of one request as the shared script reads it: prompts from
 * the text parts of user contents (context blocks left out), tool results
 * from the functionResponse parts after the last prompt.
 */
export function scriptInputOf(body: any): ScriptInput {
  const contents: Content[] = Array.isArray(body?.contents) ? body.contents.filter((c: unknown) => typeof c === 'object' && c !== null) : []
  const prompts: string[] = []
  let toolResults: string[] = []
  for (const content of contents) {
    if (content.role !== 'user') continue
    const parts = partsOf(content)
    const responses = parts.filter((p) => p.functionResponse !== undefined)
    if (responses.length > 0) {
      toolResults.push(...responses.map(responseText))
      continue
    }
    const texts = parts.flatMap((p) => (typeof p.text === 'string' && !CONTEXT_BLOCK.test(p.text) ? [p.text] : []))
    if (texts.length === 0) continue
    prompts.push(texts.join('\n'))
    toolResults = []
  }
  return { prompts, toolResults }
}

/** Thought chunks of Gemini read `**Subject**\nbody`. */
const THOUGHT_SUBJECT = '**Running the command**\n'

/** The SSE chunks (GenerateContentResponse objects) of one model step. */
export function streamChunks(step: ScriptStep, ids: { n: number; model: string; promptTokens: number }): object[] {
  const chunk = (parts: object[], last?: { usage: object }) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last && { finishReason: 'STOP' }) }],
    ...(last && { usageMetadata: last.usage }),
    modelVersion: ids.model,
    responseId: `fake-response-${ids.n}`,
  })
  const chunks: object[] = []
  if (step.thinking !== undefined) chunks.push(chunk([{ text: `${THOUGHT_SUBJECT}${step.thinking}`, thought: true }]))
  const pieces = step.text === '' ? [] : textPieces(step.text)
  const finalParts: object[] = []
  if (step.toolCommand !== undefined) {
    finalParts.push({
      functionCall: { id: `call_fake_${ids.n}`, name: 'run_shell_command', args: { command: step.toolCommand, description: 'Run the command' } },
    })
  } else if (pieces.length > 0) finalParts.push({ text: pieces.pop() })
  for (const piece of pieces) chunks.push(chunk([{ text: piece }]))
  const candidatesTokenCount = roughTokens(step.text.length + (step.toolCommand?.length ?? 0))
  const thoughtsTokenCount = step.thinking !== undefined ? roughTokens(step.thinking.length) : 0
  const usage = {
    promptTokenCount: ids.promptTokens,
    candidatesTokenCount,
    totalTokenCount: ids.promptTokens + candidatesTokenCount + thoughtsTokenCount,
    ...(thoughtsTokenCount > 0 && { thoughtsTokenCount }),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: ids.promptTokens }],
  }
  chunks.push(chunk(finalParts, { usage }))
  return chunks
}

/** The router's answer (model `auto`): a low complexity score, which picks the flash model. */
function routerResponse(model: string): object {
  const text = JSON.stringify({ complexity_reasoning: 'A direct, explicit request.', complexity_score: 10 })
  return {
    candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: model,
    responseId: 'fake-router',
  }
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } }))
}

/** Starts the fake on 127.0.0.1. */
export async function startFakeGemini(options: { port?: number } = {}): Promise<FakeGemini> {
  const failures: number[] = []
  let counter = 0

  async function stream(res: ServerResponse, record: RecordedRequest, body: any, promptTokens: number) {
    const gone = clientGone(res, record)
    const n = ++counter
    const step = scriptStep(scriptInputOf(body))
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    if (step.delayMs) await waitUnlessGone(step.delayMs, gone)
    for (const chunk of streamChunks(step, { n, model: record.model ?? 'gemini-2.5-flash', promptTokens })) {
      if (!gone()) res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`)
    }
    if (!gone()) res.end()
  }

  const { port, requests, stop } = await serveFake<RecordedRequest>({
    port: options.port,
    sendError,
    describe: (base) => {
      const route = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/.exec(base.path)
      return { ...base, action: route?.[2], model: route?.[1] }
    },
    handle(req, res, record, raw) {
      const { body } = record
      if (req.method !== 'POST' || record.action === undefined) return sendError(res, 404, `Not found: ${req.method} ${record.path}`)
      if (body === undefined) return sendError(res, 400, 'The request body is not valid JSON')
      if (record.action === 'generateContent' && body.generationConfig?.responseMimeType === 'application/json') {
        res.writeHead(200, { 'content-type': 'application/json' })
        return void res.end(JSON.stringify(routerResponse(record.model ?? 'gemini-3.5-flash-lite')))
      }
      if (record.action !== 'streamGenerateContent') return sendError(res, 404, `the fake does not serve ${record.action}`)
      const failure = failures.shift()
      if (failure !== undefined) return sendError(res, failure, `fake failure ${failure}`)
      return stream(res, record, body, roughTokens(raw.length))
    },
  })
  const streamRequests = () => requests.filter((r) => r.action === 'streamGenerateContent')
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    streamRequests,
    saw: (text) => streamRequests().some((r) => [...stringsIn(r.body?.contents)].some((s) => s.includes(text))),
    failNext: (status) => void failures.push(status),
    stop,
  }
}
