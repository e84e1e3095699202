import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify'
import type { Logger } from 'pino'
import { z } from 'zod'
import { EngineName, ErrorBody, ServiceError, SessionId, Stats, toServiceError, type ServiceEvent } from '../../contract/mod.ts'
import { toHttpError } from '../errors.ts'
import { strictJsonBody } from '../json-body.ts'
import { HEARTBEAT_MS, SseStreams } from '../sse.ts'
import { AnswerText, MAX_ANSWER_BYTES } from '../turns/answer-text.ts'
import { followTurn, type TurnDeps, type TurnRequest } from '../turns/follow.ts'
import { isClientVisible } from './ws/dialect.ts'

/** POST /v1/agent/chat (spec §2.5 variant): one message, one turn. */
export const AgentChatBody = z.looseObject({
  session_id: SessionId.optional(),
  message: z.string().min(1, 'must be a non-empty string'),
  system_prompt: z.string().optional(),
  instructions: z.string().optional(),
  work_dir: z.string().optional(),
  /** The engine a new session runs (a configured name; none: the default). */
  engine: EngineName.optional(),
})
export type AgentChatBody = z.output<typeof AgentChatBody>

export interface AgentChatDeps extends TurnDeps {
  log: Logger
  /** Period of the stream's keep-alive comment; default 10 s. */
  heartbeatMs?: number
  /** Refuses (SESSION_NOT_FOUND) a session of another tenant than the request's (gateway/auth/owners.ts). */
  admitRequest?: (request: FastifyRequest, sessionId: string) => Promise<void>
}

/** The JSON answer of POST /v1/agent/chat when the turn ran to its end. */
export const AgentChatAnswer = z.object({
  session_id: z.string(),
  turn_id: z.string(),
  /** `completed`, or `stopped` when a stop request ended the turn. */
  status: z.enum(['completed', 'stopped']),
  /** The turn's answer text blocks, joined with blank lines (at most MAX_ANSWER_BYTES). */
  answer: z.string(),
  /** Present, and true, only when the answer was cut at MAX_ANSWER_BYTES. */
  truncated: z.literal(true).optional(),
  /** This turn's counters (null when it was stopped). */
  stats: Stats.nullable(),
  /** The session's counters summed over its turns (null when it was stopped). */
  session_stats: Stats.nullable(),
})
export type AgentChatAnswer = z.output<typeof AgentChatAnswer>

/** A refused or failed turn: `{error}`, and for a turn that ran, its session, turn and the answer so far. */
const AgentChatFailure = z.object({
  error: ErrorBody,
  session_id: z.string().optional(),
  turn_id: z.string().optional(),
  answer: z.string().optional(),
  truncated: z.literal(true).optional(),
})

/** The route's schemas (validation and the OpenAPI document). */
const AGENT_CHAT_SCHEMA: FastifySchema = {
  summary: 'Run one turn: one JSON answer, or its native events as SSE with Accept: text/event-stream',
  body: AgentChatBody,
  response: {
    200: {
      content: {
        'application/json': { schema: AgentChatAnswer },
        'text/event-stream': { schema: z.string().describe('`data: <native event JSON>` frames until the turn ends; `: keep-alive` comments every 10 s') },
      },
    },
    ...Object.fromEntries([400, 401, 403, 404, 409, 413, 415, 429, 500, 503, 504].map((status) => [status, AgentChatFailure])),
  },
}

/**
 * POST /v1/agent/chat `{session_id, message}` (spec §2.5, §4.2): runs one
 * turn. JSON: waits and answers AgentChatAnswer; a failed turn answers its error
 * code's status with `{error: {code, message}, session_id, turn_id, answer}`.
 * Only the answer text (bounded) and the end event are kept, never the turn's
 * events. With `Accept: text/event-stream` it streams the turn's native events
 * (spec §2.4 shape) as `data:` frames, each as it comes, and ends with the
 * turn; a client that stops reading is cut off once 8 MiB wait for it
 * (gateway/sse.ts), and the gateway stops following the turn for it.
 * A plugin of its own: the service's error shape and an empty body read as none.
 */
export async function registerAgentChat(app: FastifyInstance, deps: AgentChatDeps): Promise<void> {
  const streams = new SseStreams()
  const heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS
  // Open event streams would hold the server's close forever.
  app.addHook('preClose', async () => streams.closeAll())

  await app.register(async (scope) => {
    strictJsonBody(scope, { emptyIsUndefined: true })
    // The service's own error shape on this route, not OpenCode's.
    scope.setErrorHandler((err, _request, reply) => {
      const error = toHttpError(err)
      if (error.code === 'INTERNAL') deps.log.error({ err }, 'POST /v1/agent/chat failed')
      return reply.code(error.status).send({ error: error.toBody() })
    })

    scope.post('/v1/agent/chat', { schema: AGENT_CHAT_SCHEMA }, async (request, reply) => {
      // Validated against AgentChatBody before the handler (gateway/route-schemas.ts).
      const body = request.body as AgentChatBody
      const turn: TurnRequest = { session_id: body.session_id ?? randomUUID(), prompt: body.message }
      const instructions = body.system_prompt ?? body.instructions
      if (instructions !== undefined) turn.instructions = instructions
      if (body.work_dir !== undefined) turn.work_dir = body.work_dir
      if (body.engine !== undefined) turn.engine = body.engine
      // Before either answer mode: another tenant's session is a plain 404, in JSON, with no stream opened.
      await deps.admitRequest?.(request, turn.session_id)
      // A client that goes away mid-turn is no longer followed (its turn goes on).
      const gone = new Promise<void>((resolve) => reply.raw.once('close', () => resolve()))

      if (!acceptsEventStream(request.headers.accept)) {
        const answer = new AnswerText(MAX_ANSWER_BYTES)
        const outcome = await followTurn(
          deps,
          turn,
          (event) => {
            if (event.event === 'answer') answer.add(event.data)
          },
          gone,
        )
        if (outcome.end === undefined) return reply
        if (outcome.end.event === 'error') {
          const error = new ServiceError(outcome.end.error.code, outcome.end.error.message)
          return reply
            .code(error.status)
            .send({ error: error.toBody(), session_id: turn.session_id, turn_id: outcome.turn_id, answer: answer.text, ...answer.flag })
        }
        return agentChatAnswer(turn.session_id, outcome.turn_id, outcome.end, answer)
      }

      const stream = streams.open(reply, { heartbeatMs, heartbeat: (open) => open.comment('keep-alive') })
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
  })
}

function agentChatAnswer(sessionId: string, turnId: string, end: ServiceEvent, answer: AnswerText): AgentChatAnswer {
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
