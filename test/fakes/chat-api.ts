/**
 * A fake of the chat platform's API (spec §4.4, §5.2) for tests:
 *
 *   POST /v1.0/oauth2/oAuth2/accessToken   JSON {appKey, appSecret} → {accessToken, expireIn}
 *                                          (GET with the same query parameters works too)
 *   POST /v1.0/robot/oToMessages/batchSend?robotCode=…
 *                                          needs a live token in `x-acs-chat-access-token`
 *                                          (else 401); records the body; answers {processQueryKey}
 *
 * It can be told to fail the next N calls of either endpoint with a status,
 * to hold sends until released, and to expire every token it issued.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeChatApiOptions {
  appKey?: string
  appSecret?: string
  /** `expireIn` of issued tokens, seconds; default 7200. */
  expireIn?: number
}

/** One call the fake received. */
export interface RecordedCall {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  body: any
  /** What the fake answered. */
  status: number
}

/** A robot message the fake accepted. */
export interface SentMessage {
  robotCode: string
  token: string
  body: any
}

interface Failure {
  status: number
  times: number
  retryAfter?: string | undefined
}

export interface FakeChatApi {
  /** Base URL for `chat.api_url`, e.g. `http://127.0.0.1:41234`. */
  url: string
  appKey: string
  appSecret: string
  /** Every access-token call, answered or not. */
  tokenCalls: RecordedCall[]
  /** Every batchSend call, answered or not. */
  sendCalls: RecordedCall[]
  /** Accepted messages, in arrival order. */
  sent: SentMessage[]
  /** Tokens issued so far. */
  issued: string[]
  /** `expireIn` of the next tokens, seconds. */
  expireIn: number
  /** The next `times` batchSend calls answer `status` (with Retry-After when given). */
  failSends(status: number, times?: number, retryAfter?: string): void
  /** The next `times` token calls answer `status`. */
  failTokens(status: number, times?: number): void
  /** Every token issued so far stops working (batchSend answers 401 to it). */
  expireTokens(): void
  /** Holds batchSend calls until the returned function is called. */
  holdSends(): () => void
  /** Resolves once `count` messages were accepted. */
  waitForSent(count: number, timeoutMs?: number): Promise<SentMessage[]>
  stop(): Promise<void>
}

export async function startFakeChatApi(options: FakeChatApiOptions = {}): Promise<FakeChatApi> {
  const appKey = options.appKey ?? 'fake-app-key'
  const appSecret = options.appSecret ?? 'fake-app-secret'
  const live = new Set<string>()
  const sendFailures: Failure[] = []
  const tokenFailures: Failure[] = []
  let hold: Promise<void> | undefined
  let waiters: { count: number; resolve: () => void }[] = []

  const api: FakeChatApi = {
    url: '',
    appKey,
    appSecret,
    tokenCalls: [],
    sendCalls: [],
    sent: [],
    issued: [],
    expireIn: options.expireIn ?? 7200,
    failSends: (status, times = 1, retryAfter) => void sendFailures.push({ status, times, retryAfter }),
    failTokens: (status, times = 1) => void tokenFailures.push({ status, times }),
    expireTokens: () => live.clear(),
    holdSends() {
      const released = Promise.withResolvers<void>()
      hold = released.promise
      return () => {
        hold = undefined
        released.resolve()
      }
    },
    waitForSent(count, timeoutMs = 15_000) {
      if (api.sent.length >= count) return Promise.resolve(api.sent.slice())
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`fake chat API: ${api.sent.length} of ${count} messages within ${timeoutMs} ms: ${JSON.stringify(api.sent.map((m) => m.body))}`)),
          timeoutMs,
        )
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer)
            resolve(api.sent.slice())
          },
        })
      })
    },
    async stop() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }

  function takeFailure(queue: Failure[]): Failure | undefined {
    const next = queue[0]
    if (!next) return undefined
    if (--next.times <= 0) queue.shift()
    return next
  }

  function answer(res: ServerResponse, call: RecordedCall, status: number, body: unknown, headers: Record<string, string> = {}): void {
    call.status = status
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }

  async function token(req: IncomingMessage, res: ServerResponse, call: RecordedCall): Promise<void> {
    api.tokenCalls.push(call)
    const failure = takeFailure(tokenFailures)
    if (failure) return answer(res, call, failure.status, { code: 'fake.failure', message: `told to fail with ${failure.status}` })
    const given = req.method === 'GET' ? { appKey: call.query.get('appKey'), appSecret: call.query.get('appSecret') } : (call.body ?? {})
    if (given.appKey !== appKey || given.appSecret !== appSecret) {
      return answer(res, call, 400, { code: 'invalidClientIdOrSecret', message: 'appKey or appSecret is wrong' })
    }
    const accessToken = `fake-token-${api.issued.length + 1}`
    api.issued.push(accessToken)
    live.add(accessToken)
    answer(res, call, 200, { accessToken, expireIn: api.expireIn })
  }

  async function batchSend(res: ServerResponse, call: RecordedCall): Promise<void> {
    api.sendCalls.push(call)
    if (hold) await hold
    const failure = takeFailure(sendFailures)
    if (failure) {
      return answer(
        res,
        call,
        failure.status,
        { code: 'fake.failure', message: `told to fail with ${failure.status}` },
        failure.retryAfter ? { 'retry-after': failure.retryAfter } : {},
      )
    }
    const tokenHeader = call.headers['x-acs-chat-access-token']
    if (typeof tokenHeader !== 'string' || !live.has(tokenHeader)) {
      return answer(res, call, 401, { code: 'InvalidAuthentication', message: 'access token is missing, wrong or expired' })
    }
    const robotCode = call.query.get('robotCode') ?? ''
    if (robotCode === '') return answer(res, call, 400, { code: 'invalidParameter.robotCode.empty', message: 'robotCode is required' })
    if (call.headers['content-type']?.startsWith('application/json') !== true || typeof call.body !== 'object' || call.body === null) {
      return answer(res, call, 400, { code: 'invalidParameter.body', message: 'expected a JSON body' })
    }
    api.sent.push({ robotCode, token: tokenHeader, body: call.body })
    answer(res, call, 200, { processQueryKey: `fake-pqk-${api.sent.length}` })
    waiters = waiters.filter((waiter) => {
      if (api.sent.length < waiter.count) return true
      waiter.resolve()
      return false
    })
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    let body: unknown
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    const url = new URL(req.url ?? '/', 'http://fake')
    const call: RecordedCall = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body, status: 0 }
    if (url.pathname === '/v1.0/oauth2/oAuth2/accessToken' && (req.method === 'POST' || req.method === 'GET')) return token(req, res, call)
    if (url.pathname === '/v1.0/robot/oToMessages/batchSend' && req.method === 'POST') return batchSend(res, call)
    answer(res, call, 404, { code: 'NotFound', message: `${req.method} ${url.pathname}` })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return api
}
