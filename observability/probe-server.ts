import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

export interface ProbeServerOptions {
  /** `runner.http_port` or `controller.http_port` (0 = any free port). */
  port: number
  host: string
  log: Logger
  /** Names the server in its log lines (`runner-http`, `controller-http`). */
  component: string
  /** Adds the routes (probes and /metrics). */
  register(app: FastifyInstance): void
}

/**
 * The small HTTP server of the modes without a gateway (runner, controller):
 * probes and /metrics for the orchestrator and Prometheus, nothing else.
 */
export async function startProbeServer(options: ProbeServerOptions): Promise<{ address: string; app: FastifyInstance }> {
  const app = Fastify({
    loggerInstance: options.log.child({ component: options.component }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  })
  options.register(app)
  try {
    const address = await app.listen({ port: options.port, host: options.host })
    return { address, app }
  } catch (err) {
    await app.close().catch(() => {})
    throw err
  }
}
