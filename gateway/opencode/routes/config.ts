import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Runners } from '../../runners.ts'
import type { ServerConfig } from '../schemas/config.ts'

export interface ConfigDeps {
  runners: Pick<Runners, 'send'>
  version: string
  auth: boolean
  log: Logger
}

/** GET /config: version and capability metadata; the engine's version is asked of a runner once. */
export function configRoutes(app: FastifyInstance, deps: ConfigDeps): void {
  let engine: { name: string; version: string } | undefined
  app.get('/config', async (): Promise<ServerConfig> => {
    if (!engine) {
      try {
        const reply = await deps.runners.send({ type: 'version' })
        engine = { name: reply.engine, version: reply.version }
      } catch (err) {
        // No runner yet: answer without the engine rather than fail the client's start-up.
        deps.log.warn({ err }, 'GET /config: no engine version from a runner')
      }
    }
    return {
      share: 'disabled',
      permission: 'ask',
      version: deps.version,
      engines: engine ? [engine] : [],
      surfaces: {
        websocket: '/ws/v1/agent',
        rest: [
          '/session',
          '/session/{id}',
          '/session/{id}/message',
          '/session/{id}/prompt_async',
          '/session/{id}/abort',
          '/session/status',
          '/permission',
          '/permission/{requestID}/reply',
          '/question',
          '/question/{requestID}/reply',
          '/question/{requestID}/reject',
        ],
        sse: ['/event', '/global/event'],
        chat: '/v1/agent/chat',
      },
      auth: { enabled: deps.auth, carriers: ['Authorization: Bearer <key>', 'X-API-Key: <key>'] },
    }
  })
}
