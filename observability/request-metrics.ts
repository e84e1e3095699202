import type { FastifyInstance } from 'fastify'
import type { Metrics } from './metrics.ts'

/** The route label of requests that matched no route: one value, so stray URLs cannot grow the label set. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * Times every HTTP request into `service_request_duration_seconds` by method,
 * route pattern and status. Add it before any plugin is registered, so that
 * the hook reaches the plugins' routes too.
 */
export function recordRequestDurations(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.requestDone(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000)
  })
}

/** The route label of a WebSocket request: the path and the request's `type`. */
export function wsRoute(path: string, type: string): string {
  return `${path}#${type}`
}
