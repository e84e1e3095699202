import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ServiceError } from '../../../contract/mod.ts'
import { parseBody } from '../../json-body.ts'
import { permissionReplyOf, toPermissionV2 } from '../mapping/requests.ts'
import type { LocationInfo } from '../schemas/steering.ts'
import { PermissionReplyBody, QuestionReplyBody } from '../schemas/steering.ts'
import { DEFAULT_PROJECT } from '../session-info.ts'
import { steeringHandler, type SteeringRouteDeps } from './steering.ts'

type SessionParams = FastifyRequest<{ Params: { sessionID: string } }>
type RequestParams = FastifyRequest<{ Params: { sessionID: string; requestID: string } }>

/**
 * The steering routes of OpenCode's `/api` (the v2 client's `v2.session.permission.*`,
 * `v2.session.question.*`, `v2.permission.request.list`, `v2.question.request.list`),
 * as far as they map onto the service: lists under `data`, answers 204. Not
 * here (404): creating a permission request (the engine asks, not a client)
 * and saved permissions (an "allow always" lasts the session, in its runner).
 */
export function steeringV2Routes(app: FastifyInstance, { steering, tenant, workBase }: SteeringRouteDeps): void {
  const base = workBase ?? '/'
  const location: LocationInfo = { directory: base, project: { id: DEFAULT_PROJECT, directory: base } }

  app.get(
    '/api/permission/request',
    steeringHandler('permission', 'v2', async (request) => ({ location, data: (await steering.permissions(tenant(request))).map(toPermissionV2) })),
  )

  app.get(
    '/api/session/:sessionID/permission',
    steeringHandler('permission', 'v2', async (request: SessionParams) => ({
      data: (await steering.ofSession(request.params.sessionID, tenant(request))).permissions.map(toPermissionV2),
    })),
  )

  app.get(
    '/api/session/:sessionID/permission/:requestID',
    steeringHandler('permission', 'v2', async (request: RequestParams) => {
      const { sessionID, requestID } = request.params
      const found = (await steering.ofSession(sessionID, tenant(request))).permissions.find((permission) => permission.id === requestID)
      if (!found) throw new ServiceError('PERMISSION_NOT_FOUND', `Permission request not found: ${requestID}`)
      return { data: toPermissionV2(found) }
    }),
  )

  app.post(
    '/api/session/:sessionID/permission/:requestID/reply',
    steeringHandler('permission', 'v2', async (request: RequestParams, reply) => {
      const body = parseBody(PermissionReplyBody, request.body)
      await steering.reply(tenant(request), permissionReplyOf(request.params.requestID, body), request.params.sessionID)
      return reply.code(204).send()
    }),
  )

  app.get(
    '/api/question/request',
    steeringHandler('question', 'v2', async (request) => ({ location, data: await steering.questions(tenant(request)) })),
  )

  app.get(
    '/api/session/:sessionID/question',
    steeringHandler('question', 'v2', async (request: SessionParams) => ({
      data: (await steering.ofSession(request.params.sessionID, tenant(request))).questions,
    })),
  )

  app.post(
    '/api/session/:sessionID/question/:requestID/reply',
    steeringHandler('question', 'v2', async (request: RequestParams, reply) => {
      const body = parseBody(QuestionReplyBody, request.body)
      await steering.reply(tenant(request), { kind: 'answer', id: request.params.requestID, answers: body.answers }, request.params.sessionID)
      return reply.code(204).send()
    }),
  )

  app.post(
    '/api/session/:sessionID/question/:requestID/reject',
    steeringHandler('question', 'v2', async (request: RequestParams, reply) => {
      await steering.reply(tenant(request), { kind: 'reject', id: request.params.requestID }, request.params.sessionID)
      return reply.code(204).send()
    }),
  )
}
