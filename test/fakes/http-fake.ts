/**
 * The HTTP side the fake model APIs share (OpenAI Responses, OpenAI Chat
 * Completions, Gemini): a server on 127.0.0.1 that reads each request whole,
 * parses its JSON body, records it and hands it to the fake's own handler;
 * the handler of one streaming POST path; the client's going away mid-answer;
 * the `slow:` wait; the strings of a body.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One HTTP request a fake received, body already parsed (undefined if not JSON). */
export interface RecordedRequest {
  method: string
  /** Without the query. */
  path: string
  headers: IncomingHttpHeaders
  body: any
  receivedAt: number
  /** True when the client went away before the answer was complete (an interrupt, a cancel). */
  disconnected: boolean
}

export interface FakeServerOptions<R extends RecordedRequest> {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number | undefined
  /** Adds the fake's own fields to a request's record. */
  describe?: (base: RecordedRequest) => R
  /** Answers one request; `raw` is its body as received. */
  handle(req: IncomingMessage, res: ServerResponse, record: R, raw: string): Promise<void> | void
  /** Writes an error answer in the provider's shape (also for a handler that threw before answering). */
  sendError(res: ServerResponse, status: number, message: string): void
}

export interface FakeServer<R extends RecordedRequest> {
  port: number
  /** Every request, in arrival order. */
  requests: R[]
  stop(): Promise<void>
}

export async function serveFake<R extends RecordedRequest = RecordedRequest>(options: FakeServerOptions<R>): Promise<FakeServer<R>> {
  const requests: R[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: any
      try {
        body = raw.length > 0 ? JSON.parse(raw) : undefined
      } catch {
        body = undefined
      }
      const base: RecordedRequest = {
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0] ?? '/',
        headers: req.headers,
        body,
        receivedAt: Date.now(),
        disconnected: false,
      }
      const record = options.describe ? options.describe(base) : (base as R)
      requests.push(record)
      Promise.resolve()
        .then(() => options.handle(req, res, record, raw))
        .catch((err: unknown) => {
          if (!res.headersSent) options.sendError(res, 500, `fake crashed: ${String(err)}`)
          else res.destroy()
        })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * The handler of a fake that answers one streaming POST path (the OpenAI ones): 404 for anything
 * else, 400 for a body that is not JSON or does not ask to stream, the next queued failure
 * (`failNext`) instead of an answer; `stream` answers the rest.
 */
export function streamingPost<R extends RecordedRequest>(
  path: string,
  failures: number[],
  sendError: FakeServerOptions<R>['sendError'],
  stream: (res: ServerResponse, record: R, raw: string) => Promise<void> | void,
): FakeServerOptions<R>['handle'] {
  return (req, res, record, raw) => {
    const { body } = record
    if (req.method !== 'POST' || record.path !== path) return sendError(res, 404, `Not found: ${req.method} ${record.path}`)
    if (body === undefined) return sendError(res, 400, 'The request body is not valid JSON')
    const failure = failures.shift()
    if (failure !== undefined) return sendError(res, failure, `fake failure ${failure}`)
    if (body.stream !== true) return sendError(res, 400, 'the fake streams only (stream: true)')
    return stream(res, record, raw)
  }
}

/** Whether the client went away before the answer ended; the record says so too. */
export function clientGone(res: ServerResponse, record: RecordedRequest): () => boolean {
  let gone = false
  res.once('close', () => {
    if (!res.writableFinished) {
      gone = true
      record.disconnected = true
    }
  })
  return () => gone
}

/** Step of the `slow:` wait: it ends within one step once the client is gone. */
const WAIT_STEP_MS = 25

/** The `slow:` wait of the model script: `ms`, or less once `gone()`. */
export async function waitUnlessGone(ms: number, gone: () => boolean): Promise<void> {
  const until = Date.now() + ms
  while (!gone() && Date.now() < until) await new Promise<void>((resolve) => setTimeout(resolve, Math.min(WAIT_STEP_MS, until - Date.now())))
}

/** Every string inside a JSON value. */
export function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value
  else if (Array.isArray(value)) for (const v of value) yield* stringsIn(v)
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) yield* stringsIn(v)
}
