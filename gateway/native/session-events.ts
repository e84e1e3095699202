import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { ErrorBody } from '../../contract/errors.ts'
import { SessionEventsPage, SessionEventsQuery, SessionIdParams } from '../../contract/sessions.ts'
import { STREAM_ROUTE } from '../route-config.ts'
import type { SessionHub } from '../session-hub.ts'
import { HEARTBEAT_MS, SseStreams } from '../sse.ts'
import type { SessionDirectory } from './directory/directory.ts'
import { parseLastSeq } from './last-seq.ts'
import { isClientVisible } from './ws/dialect.ts'

export interface SessionEventsDeps {
  hub: SessionHub
  directory: SessionDirectory
  tenant: (request: FastifyRequest) => string
  /** Refuses (SESSION_NOT_FOUND) a session of another tenant; none without tenants (gateway/auth/owners.ts). */
  admit?: ((request: FastifyRequest, sessionId: string) => Promise<void>) | undefined
}

/**
 * `GET /v1/sessions/{id}/events`: one session's native events as SSE, each
 * with `id: <seq>`. A client that reconnects with `Last-Event-ID` (or
 * `?last_seq=`) gets what it missed, then the live events, each once.
 * With `Accept: application/json` (and not `text/event-stream`), one page of
 * the stored events instead: `?after_seq=N&limit=M`.
 * `admit` refuses (SESSION_NOT_FOUND) a session of another tenant.
 */
export function registerSessionEvents(app: FastifyInstance, deps: SessionEventsDeps): void {
  const { hub, directory, tenant, admit } = deps
  const streams = new SseStreams()
  app.addHook('preClose', async () => streams.closeAll())
  app.get(
    '/v1/sessions/:id/events',
    {
      config: STREAM_ROUTE,
      schema: {
        summary: 'A session’s events: live SSE (resumable), or a JSON page of the stored ones',
        tags: ['sessions'],
        params: SessionIdParams,
        querystring: SessionEventsQuery,
        response: {
          200: {
            content: {
              'text/event-stream': { schema: z.string().describe('`id: <seq>` and `data: <native event JSON>` frames; `: heartbeat` comments every 10 s') },
              'application/json': { schema: SessionEventsPage },
            },
          },
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const sessionId = (request.params as SessionIdParams).id
      const query = request.query as SessionEventsQuery
      if (wantsJsonPage(request.headers.accept)) return directory.events(tenant(request), sessionId, query.after_seq, query.limit)
      const afterSeq = parseLastSeq(request.headers['last-event-id'] ?? query.last_seq, 'Last-Event-ID (or last_seq)')
      // Another tenant's session is a 404 before any header of the stream is sent (gateway/auth/owners.ts).
      await admit?.(request, sessionId)
      const stream = streams.open(reply, { heartbeatMs: HEARTBEAT_MS, heartbeat: (s) => s.comment('heartbeat') })
      stream.comment(`session ${sessionId}`)
      const detach = hub.attach(
        sessionId,
        (event, json) => {
          if (isClientVisible(event)) stream.sendJson(json, event.seq === undefined ? undefined : String(event.seq))
        },
        { afterSeq },
      )
      void stream.done.then(detach)
      return reply
    },
  )
}

/** JSON when the client names application/json and not text/event-stream; SSE otherwise (what the route always answered). Pure. */
export function wantsJsonPage(accept: string | undefined): boolean {
  if (accept === undefined) return false
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase())
  return types.includes('application/json') && !types.includes('text/event-stream')
}
