import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'
import { registerAgentChat } from './agent-chat-route.ts'
import { registerSessionEvents } from './session-events.ts'
import { registerWebSocket, type WebSocketDeps } from './ws/route.ts'

/** The native surface (spec §2): the WebSocket, POST /v1/agent/chat and GET /v1/sessions/{id}/events. */

export interface NativeDeps {
  runners: Runners
  hub: SessionHub
  log: Logger
  /** Refuses (SESSION_NOT_FOUND) a session the request's tenant may not use; none without tenants (gateway/auth/owners.ts). */
  admit?: ((request: FastifyRequest, sessionId: string) => Promise<void>) | undefined
  websocket: Pick<WebSocketDeps, 'frames' | 'pingIntervalMs' | 'taskPulseMs' | 'maxSendBuffer' | 'observeRequest'>
}

export async function registerNative(app: FastifyInstance, deps: NativeDeps): Promise<void> {
  const { runners, hub, log, admit } = deps
  registerWebSocket(app, { runners, hub, log, admit, ...deps.websocket })
  await registerAgentChat(app, { runners, hub, log, ...(admit && { admitRequest: admit }) })
  registerSessionEvents(app, hub, admit)
}

export { WS_PATH } from './ws/route.ts'
