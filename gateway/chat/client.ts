import type { Logger } from 'pino'
import { ChatError } from './errors.ts'
import { parseRetryAfter } from '../../contract/retry-after.ts'
import { isRetryableStatus, retryDelayMs } from './retry.ts'
import { AccessTokenCache, type FetchedToken } from './token-cache.ts'
import { AccessTokenResponse, BATCH_SEND_PATH, TOKEN_HEADER, TOKEN_PATH, type AccessTokenRequest, type SendBody } from './wire.ts'

export interface RobotClientOptions {
  /** {chat_api_url}, without the `/v1.0/…` paths. */
  apiUrl: string
  appKey: string
  appSecret: string
  /** Tries per message on 429, 5xx and network failures, the first included. */
  attempts: number
  /** First wait between tries; doubles per try. */
  retryDelayMs: number
  requestTimeoutMs: number
  log: Logger
  /** Waits between tries; tests pass one that does not sleep. */
  sleep?: (ms: number) => Promise<void>
  now?: () => number
  fetch?: typeof fetch
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** How much of an error answer goes into a log line. */
const BODY_EXCERPT = 300

/**
 * The robot API (spec §4.4, §5.2): the access token, cached by an
 * AccessTokenCache, and `batchSend` with retries. A 401 forces one token
 * refresh and one more try; 429, 5xx and network failures are retried with
 * backoff; anything else fails at once.
 */
export class RobotClient {
  readonly tokens: AccessTokenCache
  readonly #options: RobotClientOptions
  readonly #fetch: typeof fetch
  readonly #sleep: (ms: number) => Promise<void>
  readonly #now: () => number

  constructor(options: RobotClientOptions) {
    this.#options = options
    this.#fetch = options.fetch ?? globalThis.fetch
    this.#sleep = options.sleep ?? sleep
    this.#now = options.now ?? Date.now
    this.tokens = new AccessTokenCache({ fetch: () => this.#fetchToken(), now: this.#now })
  }

  /** Sends one message to the robot's one-to-one conversation; throws ChatError when it could not be delivered. */
  async send(robotCode: string, body: SendBody): Promise<void> {
    if (robotCode === '') throw new ChatError('CHAT_ROBOT_CODE_MISSING', 'robotCode is empty; the message was not sent')
    const url = `${this.#base()}${BATCH_SEND_PATH}?robotCode=${encodeURIComponent(robotCode)}`
    let refreshed = false
    for (let attempt = 1; ; attempt++) {
      let failure: ChatError
      let retryAfterMs: number | undefined
      try {
        const token = await this.tokens.get()
        const response = await this.#post(url, body, { [TOKEN_HEADER]: token })
        if (response.ok) {
          await response.body?.cancel()
          return
        }
        if (response.status === 401 && !refreshed) {
          // The token was revoked or expired early: one forced refresh, one more try (not counted).
          await response.body?.cancel()
          refreshed = true
          this.tokens.invalidate(token)
          this.#options.log.warn({ robot_code: robotCode }, 'chat API refused the access token; refreshing it once')
          attempt--
          continue
        }
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.#now())
        failure = new ChatError('CHAT_SEND_FAILED', `batchSend answered ${response.status}: ${await excerpt(response)}`, {
          status: response.status,
          retryable: isRetryableStatus(response.status),
        })
      } catch (err) {
        failure =
          err instanceof ChatError ? err : new ChatError('CHAT_SEND_FAILED', `batchSend failed: ${(err as Error).message}`, { retryable: true, cause: err })
      }
      if (!failure.retryable || attempt >= this.#options.attempts) throw failure
      const delay = retryDelayMs(attempt, this.#options.retryDelayMs, retryAfterMs)
      this.#options.log.warn(
        { robot_code: robotCode, attempt, delay_ms: delay, status: failure.status, code: failure.code },
        'chat message not sent; trying again',
      )
      await this.#sleep(delay)
    }
  }

  async #fetchToken(): Promise<FetchedToken> {
    const request: AccessTokenRequest = { appKey: this.#options.appKey, appSecret: this.#options.appSecret }
    let response: Response
    try {
      response = await this.#post(`${this.#base()}${TOKEN_PATH}`, request, {})
    } catch (err) {
      throw new ChatError('CHAT_TOKEN_FAILED', `access-token call failed: ${(err as Error).message}`, { retryable: true, cause: err })
    }
    if (!response.ok) {
      throw new ChatError('CHAT_TOKEN_FAILED', `access-token call answered ${response.status}: ${await excerpt(response)}`, {
        status: response.status,
        retryable: isRetryableStatus(response.status),
      })
    }
    let parsed
    try {
      parsed = AccessTokenResponse.parse(await response.json())
    } catch (err) {
      throw new ChatError('CHAT_TOKEN_FAILED', `access-token answer is not {accessToken, expireIn}: ${(err as Error).message}`, { cause: err })
    }
    this.#options.log.debug({ expire_in_s: parsed.expireIn }, 'chat access token fetched')
    return { token: parsed.accessToken, expiresInMs: parsed.expireIn * 1000 }
  }

  #post(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
    return this.#fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.#options.requestTimeoutMs),
    })
  }

  #base(): string {
    return this.#options.apiUrl.replace(/\/+$/, '')
  }
}

async function excerpt(response: Response): Promise<string> {
  const text = await response.text().catch(() => '')
  return text.length > BODY_EXCERPT ? `${text.slice(0, BODY_EXCERPT)}…` : text || '(empty body)'
}
