import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

export interface RunnerHttpOptions {
  /** `runner.http_port` (0 = any free port). */
  port: number
  host: string
  log: Logger
  /** Adds the routes (probes and /metrics). */
  register(app: FastifyInstance): void
}

/**
 * The runner's own small HTTP server (runner mode has no gateway server):
 * probes and /metrics for the orchestrator and Prometheus, nothing else.
 */
export async function startRunnerHttp(options: RunnerHttpOptions): Promise<{ address: string; app: FastifyInstance }> {
  const app = Fastify({
    loggerInstance: options.log.child({ component: 'runner-http' }) as FastifyBaseLogger,
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
