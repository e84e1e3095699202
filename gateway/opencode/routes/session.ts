import type { FastifyInstance } from 'fastify'
import { parseBody } from '../../json-body.ts'
import { CreateSessionBody } from '../schemas/request.ts'
import { JSON_TYPE, messagesJson } from '../message-json.ts'
import type { IdParams, RouteContext } from './context.ts'

/** Session resources: create, list, status, get, delete, abort, messages. */
export function sessionRoutes(app: FastifyInstance, { sessions, tenant }: RouteContext): void {
  // Flat for OpenCode clients, and under `info` for clients of the spec's shape (§2.1).
  app.post('/session', async (request) => {
    const info = await sessions.create(parseBody(CreateSessionBody, request.body), tenant(request))
    return { ...info, info }
  })

  app.get('/session', async (request) => sessions.list(tenant(request)))

  app.get('/session/status', async (request) => sessions.statuses(tenant(request)))

  app.get<IdParams>('/session/:id', async (request) => (await sessions.get(request.params.id, tenant(request))).info)

  app.delete<IdParams>('/session/:id', async (request) => sessions.delete(request.params.id, tenant(request)))

  app.post<IdParams>('/session/:id/abort', async (request) => sessions.abort(request.params.id, tenant(request)))

  // Serialized a slice at a time: a long turn's messages would hold the event loop (message-json.ts).
  app.get<IdParams & { Querystring: { limit?: string } }>('/session/:id/message', async (request, reply) => {
    await sessions.get(request.params.id, tenant(request))
    const messages = sessions.messages(request.params.id)
    const limit = Number(request.query.limit)
    return reply.type(JSON_TYPE).send(messagesJson(Number.isInteger(limit) && limit > 0 ? messages.slice(-limit) : messages))
  })
}
