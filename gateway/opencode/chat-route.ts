import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { toServiceError, type ServiceEvent, type Stats } from '../../contract/mod.ts'
import { runTurn, type TurnDeps, type TurnOutcome, type TurnRequest } from '../turn.ts'
import { isClientVisible } from '../ws/dialect.ts'
import { toHttpServiceError } from './errors.ts'
import { ChatBody, parseBody } from './schemas/request.ts'
import type { SseStreams } from './sse.ts'

export interface ChatDeps extends TurnDeps {
  streams: SseStreams
  heartbeatMs: number
  log: Logger
}

/** The JSON answer of POST /v1/agent/chat when the turn ran to its end. */
export interface ChatAnswer {
  session_id: string
  turn_id: string
  /** `completed`, or `stopped` when a stop request ended the turn. */
  status: 'completed' | 'stopped'
  /** The turn's answer text blocks, joined with blank lines. */
  answer: string
  /** This turn's counters (null when it was stopped). */
  stats: Stats | null
  /** The session's counters summed over its turns (null when it was stopped). */
  session_stats: Stats | null
}

/**
 * POST /v1/agent/chat `{session_id, message}` (spec §2.5, §4.2): runs one
 * turn. JSON: waits and answers ChatAnswer; a failed turn answers its error
 * code's status with `{error: {code, message}, session_id, turn_id, answer}`.
 * With `Accept: text/event-stream` it streams the turn's native events
 * (spec §2.4 shape) as `data:` frames and ends with the turn.
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

    if (!acceptsEventStream(request.headers.accept)) {
      const outcome = await runTurn(deps, turn)
      if (outcome.end === 'error') {
        const error = outcome.error ?? toServiceError(new Error('the turn failed'))
        return reply.code(error.status).send({ error: error.toBody(), session_id: outcome.session_id, turn_id: outcome.turn_id, answer: outcome.answer })
      }
      return chatAnswer(outcome)
    }

    const stream = deps.streams.open(reply, { heartbeatMs: deps.heartbeatMs, heartbeat: (open) => open.comment('keep-alive') })
    runTurn(deps, turn, (event) => {
      if (isClientVisible(event)) stream.send(event)
    }).then(
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

export function chatAnswer(outcome: TurnOutcome): ChatAnswer {
  const completed = outcome.events.find((event) => event.event === 'completed')
  return {
    session_id: outcome.session_id,
    turn_id: outcome.turn_id,
    status: outcome.end === 'stopped' ? 'stopped' : 'completed',
    answer: outcome.answer,
    stats: completed?.turn_stats ?? null,
    session_stats: outcome.stats ?? null,
  }
}

/** True when the Accept header asks for an event stream. */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)
}
