import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { ServiceError } from '../../../contract/mod.ts'
import { keepAlive } from '../../keepalive/ping.ts'
import { TaskPulse } from '../../keepalive/task-pulse.ts'
import type { FrameAdmission } from '../../limits/frame-admission.ts'
import type { RouteAccess } from '../../route-config.ts'
import type { Runners } from '../../runners.ts'
import type { SessionHub } from '../../session-hub.ts'
import { parseLastSeq } from '../last-seq.ts'
import { Connection } from './connection.ts'
import { OPENING_DIALECTS, type OpeningDialect } from './dialect.ts'

/** The native WebSocket route. */
export const WS_PATH = '/ws/v1/agent'

const WS_ROUTE = { stream: true, websocket: true } as const satisfies RouteAccess

export interface WebSocketDeps {
  runners: Runners
  hub: SessionHub
  log: Logger
  /** The frame admission (size, rate) of the connection a handshake request opens (gateway/guard.ts). */
  frames: (request: FastifyRequest) => FrameAdmission
  /** Refuses (SESSION_NOT_FOUND) a session the request's tenant may not use; none without tenants (gateway/auth/owners.ts). */
  admit?: ((request: FastifyRequest, sessionId: string) => Promise<void>) | undefined
  /** WebSocket ping period (0 = none). */
  pingIntervalMs: number
  /** task_boundary pulse period (0 = none). */
  taskPulseMs: number
  /** `limits.ws_send_buffer`. */
  maxSendBuffer: number
  /** Times each request frame: the route, its type, an HTTP-like status, seconds. */
  observeRequest?: ((path: string, type: string, status: number, seconds: number) => void) | undefined
  /** The dialect of a client that names none (`server.ws_dialect`); default native. */
  dialect?: OpeningDialect | undefined
}

/**
 * `GET /ws/v1/agent`: one Connection per client. `?session_id=` follows a
 * session from the start, `&last_seq=` replays what came after it first (a
 * malformed one refuses the handshake with BAD_REQUEST). `?dialect=hotplex`
 * speaks HotPlex's shapes (hotplex.ts), `?dialect=native` ours, whatever the
 * listener's default; another value is BAD_REQUEST. A plain HTTP request is
 * UPGRADE_REQUIRED.
 */
export function registerWebSocket(app: FastifyInstance, deps: WebSocketDeps): void {
  const { log, admit, observeRequest } = deps
  app.route<{ Querystring: { session_id?: string; last_seq?: string; dialect?: string } }>({
    method: 'GET',
    url: WS_PATH,
    config: WS_ROUTE,
    // Before the upgrade, so a bad resume point is an HTTP answer, not a socket that opens and says nothing.
    preValidation: async (request) => {
      parseLastSeq(request.query.last_seq, 'last_seq')
      parseDialect(request.query.dialect)
    },
    handler: async () => {
      throw new ServiceError('UPGRADE_REQUIRED', `${WS_PATH} speaks WebSocket: send an Upgrade: websocket request`)
    },
    wsHandler: (socket, request) => {
      const sessionId = typeof request.query.session_id === 'string' && request.query.session_id !== '' ? request.query.session_id : undefined
      keepAlive(socket, deps.pingIntervalMs)
      new Connection(
        socket,
        {
          runners: deps.runners,
          hub: deps.hub,
          log: log.child({ component: 'ws' }),
          admitFrame: deps.frames(request),
          maxSendBuffer: deps.maxSendBuffer,
          transport: request.raw.socket,
          dialect: parseDialect(request.query.dialect) ?? deps.dialect,
          ...(admit && { admit: (sessionId: string) => admit(request, sessionId) }),
          ...(observeRequest && { observeRequest: (type: string, status: number, seconds: number) => observeRequest(WS_PATH, type, status, seconds) }),
          ...(deps.taskPulseMs > 0 && { pulses: (send) => new TaskPulse(send, deps.taskPulseMs) }),
        },
        sessionId,
        parseLastSeq(request.query.last_seq, 'last_seq'),
      )
    },
  })
}

/** `?dialect=`: undefined when absent (the listener's default applies); anything unknown is BAD_REQUEST. */
export function parseDialect(value: unknown): OpeningDialect | undefined {
  if (value === undefined || value === '') return undefined
  if (typeof value === 'string' && (OPENING_DIALECTS as readonly string[]).includes(value)) return value as OpeningDialect
  throw new ServiceError('BAD_REQUEST', `dialect must be one of ${OPENING_DIALECTS.join(', ')}`)
}
