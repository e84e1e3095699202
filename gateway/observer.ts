import type { FastifyInstance } from 'fastify'

/** What the gateway's server takes from observability (observability/ implements it). */
export interface GatewayObserver {
  /** Adds /health, /health/live, /health/ready, /metrics and request timing; call before any other plugin or route. */
  register(app: FastifyInstance): void
  /** One WebSocket request (a client frame on the route `path`, by its `type`) was answered with `status` after `seconds`. */
  wsRequest(path: string, type: string, status: number, seconds: number): void
}
