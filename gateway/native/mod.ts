import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'
import { registerAgentChat } from './agent-chat-route.ts'
import type { SessionDirectory } from './directory/directory.ts'
import { registerDirectoryRoutes } from './directory/routes.ts'
import { registerSessionEvents } from './session-events.ts'
import { registerSteeringRoutes } from './steering-routes.ts'
import { registerWebSocket, type WebSocketDeps } from './ws/route.ts'

/** The native surface (spec §2): the WebSocket, POST /v1/agent/chat, the session directory, GET /v1/sessions/{id}/events and the steering routes. */

export interface NativeDeps {
  runners: Runners
  hub: SessionHub
  log: Logger
  /** The sessions of a tenant (GET/DELETE /v1/sessions…). */
  directory: SessionDirectory
  /** The tenant of a guarded request (gateway/guard.ts). */
  tenant: (request: FastifyRequest) => string
  /** Refuses (SESSION_NOT_FOUND) a session the request's tenant may not use; none without tenants (gateway/auth/owners.ts). */
  admit?: ((request: FastifyRequest, sessionId: string) => Promise<void>) | undefined
  websocket: Pick<WebSocketDeps, 'frames' | 'pingIntervalMs' | 'taskPulseMs' | 'maxSendBuffer' | 'observeRequest' | 'dialect'>
}

export async function registerNative(app: FastifyInstance, deps: NativeDeps): Promise<void> {
  const { runners, hub, log, admit, directory, tenant } = deps
  registerWebSocket(app, { runners, hub, log, admit, ...deps.websocket })
  await registerAgentChat(app, { runners, hub, log, ...(admit && { admitRequest: admit }) })
  registerDirectoryRoutes(app, directory, tenant)
  registerSessionEvents(app, { hub, directory, tenant, admit })
  registerSteeringRoutes(app, { runners, admit })
}

export { WS_PATH } from './ws/route.ts'
export { SessionDirectory } from './directory/directory.ts'
