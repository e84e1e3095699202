import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { ControllerMetrics } from './controller-metrics.ts'
import { startProbeServer } from './probe-server.ts'
import { Readiness, type ReadinessPolicy } from './readiness.ts'

/** The checks of the controller's GET /readyz. */
export interface ControllerChecks {
  /** NATS is connected (the session registry and the demand subject live there). */
  bus: boolean
  /** The Kubernetes API answers this replica (its Lease can be read) and, while it leads, its pod cache has listed once. */
  kube: boolean
}

/** Every check must pass; a standby that passes them is ready to take over, so it counts as ready too. */
export const CONTROLLER_READY: ReadinessPolicy<ControllerChecks> = { ready: (c) => c.bus && c.kube, failed: { bus: false, kube: false } }

export interface ControllerServerOptions {
  /** `controller.http_port` (0 = any free port). */
  port: number
  /** `server.host`. */
  host: string
  log: Logger
  metrics: ControllerMetrics
  /** Runs the checks; cached by Readiness (5 s passing, 1 s failing). */
  checks(): Promise<ControllerChecks>
  leading(): boolean
}

const Checks = { type: 'object', properties: { bus: { type: 'boolean' }, kube: { type: 'boolean' } }, required: ['bus', 'kube'] } as const
const ReadyBody = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ready', 'not_ready'] }, leading: { type: 'boolean' }, checks: Checks },
  required: ['status', 'leading', 'checks'],
} as const

/**
 * The controller's probes and metrics (no gateway runs in controller mode):
 * - GET /healthz → 200 `{status: "alive"}` while the process serves (liveness, startup);
 * - GET /readyz → 200 `{status: "ready", leading, checks: {bus, kube}}`, or 503 `not_ready`;
 * - GET /metrics → the Prometheus text format (ControllerMetrics).
 */
export function registerControllerRoutes(
  app: FastifyInstance,
  options: Pick<ControllerServerOptions, 'metrics' | 'leading'> & { readiness: Readiness<ControllerChecks> },
): void {
  const { metrics, readiness } = options
  app.get(
    '/healthz',
    { schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { status: 'alive' }
    },
  )
  app.get('/readyz', { schema: { response: { 200: ReadyBody, 503: ReadyBody } } }, async (_request, reply) => {
    const state = await readiness.state()
    reply.header('cache-control', 'no-store')
    return reply.code(state.ready ? 200 : 503).send({ status: state.ready ? 'ready' : 'not_ready', leading: options.leading(), checks: state.checks })
  })
  app.get('/metrics', async (_request, reply) => {
    reply.header('cache-control', 'no-store').type(metrics.contentType)
    return metrics.render()
  })
}

/** Starts the controller's probe and metrics server; its address and a stop. */
export async function startControllerServer(options: ControllerServerOptions): Promise<{ address: string; close(): Promise<void> }> {
  const readiness = new Readiness(options.checks, CONTROLLER_READY)
  const { address, app } = await startProbeServer({
    port: options.port,
    host: options.host,
    log: options.log,
    component: 'controller-http',
    register: (app) => registerControllerRoutes(app, { metrics: options.metrics, leading: options.leading, readiness }),
  })
  return { address, close: () => app.close() }
}
