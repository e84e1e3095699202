import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ServiceError, SessionId } from '../../contract/mod.ts'
import { STREAM_ROUTE } from '../route-config.ts'
import type { SessionHub } from '../session-hub.ts'
import { HEARTBEAT_MS, SseStreams } from '../sse.ts'
import { parseLastSeq } from './last-seq.ts'
import { isClientVisible } from './ws/dialect.ts'

/**
 * `GET /v1/sessions/{id}/events`: one session's native events as SSE, each
 * with `id: <seq>`. A client that reconnects with `Last-Event-ID` (or
 * `?last_seq=`) gets what it missed, then the live events, each once.
 * `admit` refuses (SESSION_NOT_FOUND) a session of another tenant.
 */
export function registerSessionEvents(app: FastifyInstance, hub: SessionHub, admit?: (request: FastifyRequest, sessionId: string) => Promise<void>): void {
  const streams = new SseStreams()
  app.addHook('preClose', async () => streams.closeAll())
  app.get<{ Params: { id: string }; Querystring: { last_seq?: string } }>('/v1/sessions/:id/events', { config: STREAM_ROUTE }, async (request, reply) => {
    const sessionId = SessionId.safeParse(request.params.id)
    if (!sessionId.success) throw new ServiceError('BAD_REQUEST', 'the session id must be 1 to 256 characters')
    const afterSeq = parseLastSeq(request.headers['last-event-id'] ?? request.query.last_seq, 'Last-Event-ID (or last_seq)')
    // Another tenant's session is a 404 before any header of the stream is sent (gateway/auth/owners.ts).
    await admit?.(request, sessionId.data)
    const stream = streams.open(reply, { heartbeatMs: HEARTBEAT_MS, heartbeat: (s) => s.comment('heartbeat') })
    stream.comment(`session ${sessionId.data}`)
    const detach = hub.attach(
      sessionId.data,
      (event, json) => {
        if (isClientVisible(event)) stream.sendJson(json, event.seq === undefined ? undefined : String(event.seq))
      },
      { afterSeq },
    )
    void stream.done.then(detach)
    return reply
  })
}
