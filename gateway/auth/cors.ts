import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import type { OriginPolicy } from './origins.ts'

/** Request headers a page may send: the two key carriers, JSON bodies, and the SSE resume point. */
export const CORS_ALLOWED_HEADERS = ['authorization', 'x-api-key', 'content-type', 'last-event-id'] as const

/** Response headers a page may read: when to come back after a 429 or 503. */
export const CORS_EXPOSED_HEADERS = ['retry-after'] as const

/** Methods the service's routes use. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/** How long a browser may keep a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE_S = 600

/**
 * CORS for the origins of the browser-origin rule (gateway/auth/origins.ts), so a page on an allowed
 * origin can use REST and SSE as it can the WebSocket. Registered before the guard: a preflight carries
 * no key (browsers strip it), so it is answered in this onRequest hook, before the guard's. A request
 * from any other origin gets no `Access-Control-*` header, and its preflight goes on to the guard,
 * which refuses it (403 FORBIDDEN_ORIGIN). Requests without `Origin` are not CORS and get nothing.
 */
export async function registerCors(app: FastifyInstance, origins: OriginPolicy): Promise<void> {
  await app.register(cors, {
    origin: (origin, done) => done(null, origin !== undefined && origins.allows(origin)),
    methods: [...CORS_METHODS],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE_S,
  })
}
