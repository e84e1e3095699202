import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { parseBody } from '../../json-body.ts'
import { toSteeringError, type SteeringPlace } from '../errors.ts'
import { decisionOfReply, permissionReplyOf } from '../mapping/requests.ts'
import { PermissionReplyBody, PermissionRespondBody, QuestionReplyBody } from '../schemas/steering.ts'
import type { OpencodeSteering } from '../steering.ts'

export interface SteeringRouteDeps {
  steering: OpencodeSteering
  /** The tenant of the request's key (gateway/guard.ts). */
  tenant: (request: FastifyRequest) => string
  /** The sandbox base, for the `/api` lists' `location`; `/` when the gateway does not know it. */
  workBase: string | undefined
}

type StepParams = { requestID?: string; permissionID?: string; sessionID?: string; id?: string }

/**
 * A steering route's handler whose failures answer in OpenCode's tagged
 * shapes (errors.ts, toSteeringError); server-side ones go on to the
 * layer's error handler, which logs them.
 */
export function steeringHandler<R extends FastifyRequest>(
  kind: SteeringPlace['kind'],
  api: SteeringPlace['api'],
  handler: (request: R, reply: FastifyReply) => Promise<unknown>,
) {
  return async (request: R, reply: FastifyReply) => {
    try {
      return await handler(request, reply)
    } catch (err) {
      const params = (request.params ?? {}) as StepParams
      const { status, body } = toSteeringError(err, { kind, api, requestID: params.requestID ?? params.permissionID, sessionID: params.sessionID ?? params.id })
      if (status >= 500) throw err
      return reply.code(status).send(body)
    }
  }
}

type RequestParams = FastifyRequest<{ Params: { requestID: string } }>
type RespondParams = FastifyRequest<{ Params: { id: string; permissionID: string } }>

/**
 * OpenCode 1.18's steering routes (the v1 client's `permission.*` and
 * `question.*`, and the TUI's): lists of what waits, and the answers, each
 * `true` once the runner took it.
 */
export function steeringRoutes(app: FastifyInstance, { steering, tenant }: SteeringRouteDeps): void {
  app.get(
    '/permission',
    steeringHandler('permission', 'v1', async (request) => steering.permissions(tenant(request))),
  )

  app.post(
    '/permission/:requestID/reply',
    steeringHandler('permission', 'v1', async (request: RequestParams) => {
      const body = parseBody(PermissionReplyBody, request.body)
      await steering.reply(tenant(request), permissionReplyOf(request.params.requestID, body))
      return true
    }),
  )

  // The older route (SDK v1's postSessionIdPermissionsPermissionId, v2's deprecated permission.respond).
  app.post(
    '/session/:id/permissions/:permissionID',
    steeringHandler('permission', 'v1', async (request: RespondParams) => {
      const body = parseBody(PermissionRespondBody, request.body)
      await steering.reply(
        tenant(request),
        { kind: 'permission', id: request.params.permissionID, decision: decisionOfReply(body.response) },
        request.params.id,
      )
      return true
    }),
  )

  app.get(
    '/question',
    steeringHandler('question', 'v1', async (request) => steering.questions(tenant(request))),
  )

  app.post(
    '/question/:requestID/reply',
    steeringHandler('question', 'v1', async (request: RequestParams) => {
      const body = parseBody(QuestionReplyBody, request.body)
      await steering.reply(tenant(request), { kind: 'answer', id: request.params.requestID, answers: body.answers })
      return true
    }),
  )

  app.post(
    '/question/:requestID/reject',
    steeringHandler('question', 'v1', async (request: RequestParams) => {
      await steering.reply(tenant(request), { kind: 'reject', id: request.params.requestID })
      return true
    }),
  )
}
