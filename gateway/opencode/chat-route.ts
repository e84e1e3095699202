import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { ServiceError, toServiceError, type ServiceEvent, type Stats } from '../../contract/mod.ts'
import { AnswerText, MAX_ANSWER_BYTES } from '../answer-text.ts'
import { followTurn, type TurnDeps, type TurnRequest } from '../turn.ts'
import { isClientVisible } from '../ws/dialect.ts'
import { toHttpServiceError } from './errors.ts'
import { ChatBody, parseBody } from './schemas/request.ts'
import type { SseStreams } from './sse.ts'

export interface ChatDeps extends TurnDeps {
  streams: SseStreams
  heartbeatMs: number
  log: Logger
  /** Refuses (SESSION_NOT_FOUND) a session of another tenant than the request's (gateway/auth/owners.ts). */
  admitRequest?: (request: FastifyRequest, sessionId: string) => Promise<void>
}

/** The JSON answer of POST /v1/agent/chat when the turn ran to its end. */
export interface ChatAnswer {
  session_id: string
  turn_id: string
  /** `completed`, or `stopped` when a stop request ended the turn. */
  status: 'completed' | 'stopped'
  /** The turn's answer text blocks, joined with blank lines (at most MAX_ANSWER_BYTES). */
  answer: string
  /** Present, and true, only when the answer was cut at MAX_ANSWER_BYTES. */
  truncated?: true
  /** This turn's counters (null when it was stopped). */
  stats: Stats | null
  /** The session's counters summed over its turns (null when it was stopped). */
  session_stats: Stats | null
}

/**
 * POST /v1/agent/chat `{session_id, message}` (spec §2.5, §4.2): runs one
 * turn. JSON: waits and answers ChatAnswer; a failed turn answers its error
 * code's status with `{error: {code, message}, session_id, turn_id, answer}`.
 * Only the answer text (bounded) and the end event are kept, never the turn's
 * events. With `Accept: text/event-stream` it streams the turn's native events
 * (spec §2.4 shape) as `data:` frames, each as it comes, and ends with the
 * turn; a client that stops reading is cut off once 8 MiB wait for it
 * (gateway/opencode/sse.ts), and the gateway stops following the turn for it.
 */
export function chatRoutes(app: FastifyInstance, deps: ChatDeps): void {
  // The service's own error shape on this route, not OpenCode's.
  app.setErrorHandler((err, _request, reply) => {
    const error = toHttpServiceError(err)
    if (error.code === 'INTERNAL') deps.log.error({ err }, 'POST /v1/agent/chat failed')
    return reply.code(error.status).send({ error: error.toBody() })
  })

  app.post('/v1/agent/chat', async (request, reply) => {
    const body = parseBody(ChatBody, request.body)
    const turn: TurnRequest = { session_id: body.session_id ?? randomUUID(), prompt: body.message }
    const instructions = body.system_prompt ?? body.instructions
    if (instructions !== undefined) turn.instructions = instructions
    if (body.work_dir !== undefined) turn.work_dir = body.work_dir
    // Before either answer mode: another tenant's session is a plain 404, in JSON, with no stream opened.
    await deps.admitRequest?.(request, turn.session_id)
    // A client that goes away mid-turn is no longer followed (its turn goes on).
    const gone = new Promise<void>((resolve) => reply.raw.once('close', () => resolve()))

    if (!acceptsEventStream(request.headers.accept)) {
      const answer = new AnswerText(MAX_ANSWER_BYTES)
      const outcome = await followTurn(deps, turn, (event) => {
        if (event.event === 'answer') answer.add(event.data)
      }, gone)
      if (outcome.end === undefined) return reply
      if (outcome.end.event === 'error') {
        const error = new ServiceError(outcome.end.error.code, outcome.end.error.message)
        return reply.code(error.status).send({ error: error.toBody(), session_id: turn.session_id, turn_id: outcome.turn_id, answer: answer.text, ...answer.flag })
      }
      return chatAnswer(turn.session_id, outcome.turn_id, outcome.end, answer)
    }

    const stream = deps.streams.open(reply, { heartbeatMs: deps.heartbeatMs, heartbeat: (open) => open.comment('keep-alive') })
    // Sends the headers now: the first event may be seconds away, and clients wait for the headers.
    stream.comment('turn starting')
    followTurn(
      deps,
      turn,
      (event) => {
        if (isClientVisible(event)) stream.send(event)
      },
      stream.done,
    ).then(
      () => stream.close(),
      (err: unknown) => {
        // The turn did not start; the stream is open already, so the error comes as a native error event.
        const error = toServiceError(err)
        const event: ServiceEvent = { event: 'error', session_id: turn.session_id, data: error.message, error: error.toBody() }
        stream.send(event)
        stream.close()
      },
    )
    return reply
  })
}

export function chatAnswer(sessionId: string, turnId: string, end: ServiceEvent, answer: AnswerText): ChatAnswer {
  const completed = end.event === 'completed' ? end : undefined
  return {
    session_id: sessionId,
    turn_id: turnId,
    status: end.event === 'stopped' ? 'stopped' : 'completed',
    answer: answer.text,
    ...answer.flag,
    stats: completed?.turn_stats ?? null,
    session_stats: completed?.stats ?? null,
  }
}

/** True when the Accept header asks for an event stream. */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)
}
