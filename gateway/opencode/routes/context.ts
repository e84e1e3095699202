import type { FastifyRequest } from 'fastify'
import type { EventBroadcast } from '../broadcast.ts'
import type { IdSource } from '../ids.ts'
import type { OpencodeSessions } from '../sessions.ts'
import type { SseStreams } from '../../sse.ts'

/** What the OpenCode routes share. */
export interface RouteContext {
  sessions: OpencodeSessions
  broadcast: EventBroadcast
  streams: SseStreams
  ids: IdSource
  heartbeatMs: number
  /** The provider named in messages when a prompt names none (the engine). */
  defaultProvider: string
  /** The tenant of the request's key (gateway/guard.ts); `default` without keys. */
  tenant: (request: FastifyRequest) => string
}

export type IdParams = { Params: { id: string } }
