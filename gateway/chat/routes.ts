import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { z } from 'zod'
import { toHttpError } from '../errors.ts'
import { OPEN_ROUTE } from '../route-config.ts'
import type { ChatSettings } from './config.ts'
import { ReplayGuard } from './replay-guard.ts'
import { verify, type SignedParams } from './signature.ts'
import type { ChatSession } from './sessions.ts'
import { Callback, TextCallback, toChatMessage, type ChatMessage } from './wire.ts'

/**
 * Where the chat platform delivers callbacks: GET verifies the URL, POST brings messages.
 * Open (no API key: the platform cannot send ours); every callback is checked by its own HMAC signature.
 */
export const CALLBACK_PATH = '/v1/chat/callback'

/** Largest callback body; a text message is far smaller. */
const BODY_LIMIT = 256 * 1024

/** Where accepted callbacks go (the ChatAdapter). */
export interface MessageSink {
  /** Queues a text message; returns its session at once. */
  receive(message: ChatMessage): ChatSession
  /** Notes a callback acknowledged without work. */
  ignore(): void
}

export interface CallbackRouteDeps {
  settings: Pick<ChatSettings, 'callback_token' | 'timestamp_window'>
  adapter: MessageSink
  log: Logger
  now?: () => number
}

type Carrier = Record<string, string | string[] | undefined>

/** The signature values of a request: each from the query when there, else from the header of the same name. Pure. */
export function signedParams(query: unknown, headers: Carrier): SignedParams {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Carrier
  const pick = (name: string) => first(q[name]) ?? first(headers[name])
  return { signature: pick('signature'), timestamp: pick('timestamp'), nonce: pick('nonce') }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function badRequest(reply: FastifyReply, what: string, error: z.ZodError): FastifyReply {
  const issue = error.issues[0]
  const where = issue && issue.path.length > 0 ? `.${issue.path.join('.')}` : ''
  return reply.code(400).send({ code: 'BAD_REQUEST', message: `${what}${where}: ${issue?.message ?? 'invalid'}` })
}

function unauthorized(reply: FastifyReply): FastifyReply {
  return reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized')
}

/** The callback routes (spec §4.4). Verification first, then the body; work is queued, never awaited. */
export function registerCallbackRoutes(app: FastifyInstance, deps: CallbackRouteDeps): void {
  const { settings, adapter, log } = deps
  const now = deps.now ?? Date.now
  const replays = new ReplayGuard(settings.timestamp_window)
  const verified = new WeakMap<FastifyRequest, { signature: string; timestampMs: number }>()

  /** Checks the signature before the body is read: a stranger cannot make the server parse anything. */
  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    const params = signedParams(request.query, request.headers)
    const result = verify(params, settings.callback_token, now(), settings.timestamp_window)
    if (!result.ok) {
      log.warn({ reason: result.reason, method: request.method, ip: request.ip }, 'chat callback rejected')
      return unauthorized(reply)
    }
    verified.set(request, { signature: params.signature!, timestampMs: result.timestampMs })
  }

  app.get(CALLBACK_PATH, { config: OPEN_ROUTE, onRequest: authenticate }, async (request, reply) => {
    log.info('chat callback URL verified')
    return reply.code(200).type('text/plain; charset=utf-8').send(signedParams(request.query, request.headers).timestamp)
  })

  app.post(
    CALLBACK_PATH,
    {
      config: OPEN_ROUTE,
      onRequest: authenticate,
      bodyLimit: BODY_LIMIT,
      errorHandler: (error, _request, reply) => {
        // The service's {code, message} with the code's status (BAD_JSON 400, PAYLOAD_TOO_LARGE 413, …).
        const failure = toHttpError(error)
        if (failure.status >= 500) log.error({ err: error }, 'chat callback failed')
        return reply.code(failure.status).send(failure.toBody())
      },
    },
    async (request, reply) => {
      const callback = Callback.safeParse(request.body)
      if (!callback.success) return badRequest(reply, 'callback body', callback.error)
      const text = callback.data.msgtype === 'text' ? TextCallback.safeParse(request.body) : undefined
      if (text && !text.success) return badRequest(reply, 'text callback', text.error)
      const stamp = verified.get(request)!
      if (!replays.firstSeen(stamp.signature, stamp.timestampMs, now())) {
        log.warn({ msgtype: callback.data.msgtype }, 'chat callback replayed within the window; acknowledged, not processed')
        return { ok: true, processed: false, reason: 'duplicate' }
      }
      if (!text) {
        adapter.ignore()
        log.info({ msgtype: callback.data.msgtype, event_type: callback.data.eventType }, 'chat callback is not a text message; acknowledged, not processed')
        return { ok: true, processed: false, reason: `msgtype ${callback.data.msgtype} is not processed` }
      }
      // Queued, not awaited: the platform gets its answer now, the agent works after.
      const session = adapter.receive(toChatMessage(text.data))
      log.debug({ session_id: session.session_id, key: session.key }, 'chat message queued')
      return { ok: true, processed: true }
    },
  )
}
