import type { FastifyInstance } from 'fastify'
import type { RouteAccess } from '../gateway/mod.ts'
import type { Metrics } from './metrics.ts'
import type { Readiness } from './readiness.ts'
import { formatUptime } from './uptime.ts'

export interface HealthRoutesOptions {
  readiness: Readiness
  metrics: Metrics
  /** The service's version (package.json). */
  version: string
  /** Epoch ms when the service started, for `uptime`. */
  startedAt: number
}

/** The probes are open on the gateway: orchestrators call them without secrets, and they tell only up/ready and the version. */
const OPEN = { access: 'open' } as const satisfies RouteAccess

const Checks = {
  type: 'object',
  properties: { engine: { type: 'boolean' }, pool: { type: 'boolean' }, bus: { type: 'boolean' } },
  required: ['engine', 'pool'],
} as const

const ReadyBody = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ready', 'not_ready', 'draining'] }, checks: Checks, sandbox: { type: 'string', enum: ['bwrap', 'none'] } },
  required: ['status', 'checks'],
} as const

/**
 * The probes and the metrics endpoint (spec §4.1), on the gateway's server
 * or the runner's own:
 * - GET /health → 200 `{status: "healthy", version, uptime}` while the process serves;
 * - GET /health/live → 200 `{status: "alive"}` while the process serves;
 * - GET /health/ready → `{status, checks: {engine, pool, bus?}, sandbox?}`: 200 when the
 *   checks pass (both, or with `server.readiness: bus` the bus alone), 503 when not
 *   (`not_ready`) or the service drains (`draining`);
 *   `sandbox` (`bwrap` | `none`) where sessions run in this process;
 * - GET /metrics → the Prometheus text format.
 */
export function registerHealthRoutes(app: FastifyInstance, options: HealthRoutesOptions): void {
  const { readiness, metrics } = options
  app.get(
    '/health',
    {
      config: OPEN,
      schema: {
        response: {
          200: {
            type: 'object',
            properties: { status: { type: 'string' }, version: { type: 'string' }, uptime: { type: 'string' } },
            required: ['status', 'version', 'uptime'],
          },
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { status: 'healthy', version: options.version, uptime: formatUptime(Date.now() - options.startedAt) }
    },
  )
  app.get(
    '/health/live',
    { config: OPEN, schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { status: 'alive' }
    },
  )
  app.get('/health/ready', { config: OPEN, schema: { response: { 200: ReadyBody, 503: ReadyBody } } }, async (_request, reply) => {
    const state = await readiness.state()
    reply.header('cache-control', 'no-store')
    return reply
      .code(state.ready ? 200 : 503)
      .send({ status: state.status, checks: state.checks, ...(state.sandbox !== undefined && { sandbox: state.sandbox }) })
  })
  app.get('/metrics', async (_request, reply) => {
    reply.header('cache-control', 'no-store').type(metrics.contentType)
    return metrics.render()
  })
}
