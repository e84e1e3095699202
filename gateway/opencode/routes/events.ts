import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { STREAM_ROUTE } from '../../route-config.ts'
import type { GlobalEnvelope } from '../schemas/event.ts'
import type { RouteContext } from './context.ts'

/**
 * The event streams: `/event` sends bare events, `/global/event` their
 * `{directory, project, payload}` envelopes (spec §6.2). Both start with
 * `server.connected` (on /global/event with a `directory`) and send `server.heartbeat` every 10 s. The events of every session of the caller's
 * tenant go to every subscriber of that tenant; clients pick theirs by `sessionID`.
 */
export function eventRoutes(app: FastifyInstance, context: RouteContext): void {
  const { broadcast, streams, ids, heartbeatMs, tenant } = context

  const serve = (wrap: (envelope: GlobalEnvelope) => unknown) => async (request: FastifyRequest, reply: FastifyReply) => {
    // Heartbeats belong to no directory: their envelope is `{payload}` alone.
    const server = (type: 'server.connected' | 'server.heartbeat', directory?: string) =>
      wrap({ ...(directory !== undefined && { directory }), payload: { id: ids('evt'), type, properties: {} } })
    const stream = streams.open(reply, { heartbeatMs, heartbeat: (open) => open.send(server('server.heartbeat')) })
    // HotPlex's clients read `directory` on the first frame: the one the client named, else the root.
    stream.send(server('server.connected', clientDirectory(request) ?? '/'))
    const unsubscribe = broadcast.subscribe(tenant(request), (envelope) => stream.send(wrap(envelope)))
    void stream.done.then(unsubscribe)
    return reply
  }

  app.get(
    '/event',
    { config: STREAM_ROUTE },
    serve((envelope) => envelope.payload),
  )
  app.get(
    '/global/event',
    { config: STREAM_ROUTE },
    serve((envelope) => envelope),
  )
}

/** The directory an OpenCode client works in, as it names it: `?directory=` or the `x-opencode-directory` header. */
function clientDirectory(request: FastifyRequest): string | undefined {
  const query = (request.query as Record<string, unknown> | undefined)?.directory
  if (typeof query === 'string' && query !== '') return query
  const header = request.headers['x-opencode-directory']
  return typeof header === 'string' && header !== '' ? decodeURIComponentSafe(header) : undefined
}

/** OpenCode's clients URI-encode the header; a value that is not encoding is taken as it is. */
function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
