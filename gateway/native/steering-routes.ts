import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { ErrorBody } from '../../contract/errors.ts'
import { PendingRequests, ReplyBody, replyOfBody } from '../../contract/mod.ts'
import { SessionIdParams } from '../../contract/sessions.ts'
import type { Runners } from '../runners.ts'

export interface SteeringRoutesDeps {
  runners: Runners
  /** Refuses (SESSION_NOT_FOUND) a session of another tenant; none without tenants (gateway/auth/owners.ts). */
  admit?: ((request: FastifyRequest, sessionId: string) => Promise<void>) | undefined
}

const REFUSALS = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 503: ErrorBody, 504: ErrorBody }

/**
 * Steering for clients without a socket: `GET /v1/sessions/{id}/pending` (the
 * permission requests and questions waiting for a person, asked of the runner
 * that owns the session) and `POST /v1/sessions/{id}/reply` (one answer, as the
 * WebSocket's `permission_reply`, `answer` and `reject` frames).
 */
export function registerSteeringRoutes(app: FastifyInstance, deps: SteeringRoutesDeps): void {
  const { runners, admit } = deps
  app.get(
    '/v1/sessions/:id/pending',
    {
      schema: {
        summary: 'The session’s permission requests and questions waiting for a person',
        tags: ['sessions'],
        params: SessionIdParams,
        response: { 200: PendingRequests, ...REFUSALS },
      },
    },
    async (request) => {
      const sessionId = (request.params as SessionIdParams).id
      await admit?.(request, sessionId)
      return runners.send({ type: 'pending', session_id: sessionId })
    },
  )
  app.post(
    '/v1/sessions/:id/reply',
    {
      schema: {
        summary: 'Answer a permission request (permission_id, decision) or a question (question_id, answers; or reject)',
        tags: ['sessions'],
        params: SessionIdParams,
        body: ReplyBody,
        response: { 200: z.object({ resolved: z.literal(true) }), ...REFUSALS },
      },
    },
    async (request) => {
      const sessionId = (request.params as SessionIdParams).id
      await admit?.(request, sessionId)
      return runners.send({ type: 'reply', session_id: sessionId, reply: replyOfBody(request.body as ReplyBody), by: 'http' })
    },
  )
}
