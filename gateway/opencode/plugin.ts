import type { FastifyInstance, FastifyRequest } from 'fastify'
import { DEFAULT_TENANT } from '../auth/config.ts'
import type { SessionOwners } from '../auth/owners.ts'
import type { Logger } from 'pino'
import { SERVICE_VERSION } from '../../contract/version.ts'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'
import { HEARTBEAT_MS, SseStreams } from '../sse.ts'
import { EventBroadcast } from './broadcast.ts'
import { strictJsonBody } from '../json-body.ts'
import { toNamedError } from './errors.ts'
import { ascendingIds, type IdSource } from './ids.ts'
import type { MapContext } from './mapping/state.ts'
import { MessageStore } from './message-store.ts'
import { DocumentSessionStore, type OpencodeSessionStore } from './session-store.ts'
import { configRoutes } from './routes/config.ts'
import type { RouteContext } from './routes/context.ts'
import { eventRoutes } from './routes/events.ts'
import { instanceRoutes } from './routes/instance.ts'
import { promptRoutes } from './routes/prompt.ts'
import { sessionRoutes } from './routes/session.ts'
import { steeringRoutes } from './routes/steering.ts'
import { steeringV2Routes } from './routes/steering-v2.ts'
import { RequestIndex } from './request-index.ts'
import { OpencodeSteering } from './steering.ts'
import { DEFAULT_PROJECT } from './session-info.ts'
import { engineNames } from './engines.ts'
import { OpencodeSessions } from './sessions.ts'

/** The provider and model named in messages until the engine reports its model. */
export const DEFAULT_PROVIDER = 'agent-runtime'
export const DEFAULT_MODEL = 'default'
/** OpenCode's default agent name; only recorded in messages. */
export const DEFAULT_AGENT = 'build'

export interface OpencodeDeps {
  runners: Runners
  hub: SessionHub
  log: Logger
  /** The sandbox base (`session.work_dir`), to report absolute session directories; relative ones without it. */
  workBase?: string
  /** Whether API keys are enforced, for GET /config; default: SERVICE_API_KEY or SERVICE_API_KEYS is set. */
  auth?: boolean
  /** Period of `server.heartbeat`; default 10 s. */
  heartbeatMs?: number
  /** Where sessions are kept; default in memory. */
  sessionStore?: OpencodeSessionStore
  ids?: IdSource
  now?: () => number
  /** The tenant of a request (gateway/guard.ts); default: every request is the tenant `default`. */
  tenant?: (request: FastifyRequest) => string
  /** Session ownership shared with the other surfaces (gateway/auth/owners.ts); none: one tenant. */
  owners?: SessionOwners
  /**
   * Whether a session runs a turn, by the session registry: a steering answer whose request this gateway
   * has not seen asks (`pending`) only the sessions that may hold it (steering.ts). None: every session this
   * gateway does not follow is asked, which may have a runner take up an idle one.
   */
  sessionBusy?: (sessionId: string) => Promise<boolean>
}

/**
 * The OpenCode-compatible REST + SSE layer (spec §4.2, §6.2) on the gateway's
 * fastify instance. Every route is an ordinary fastify route, so global hooks
 * (authentication) apply to all.
 */
export async function registerOpencode(app: FastifyInstance, deps: OpencodeDeps): Promise<void> {
  const log = deps.log.child({ component: 'opencode' })
  const ids = deps.ids ?? ascendingIds()
  const now = deps.now ?? Date.now
  const heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS
  const broadcast = new EventBroadcast()
  const streams = new SseStreams()
  const ctx: MapContext = { id: ids, now, defaults: { agent: DEFAULT_AGENT, model: { providerID: DEFAULT_PROVIDER, modelID: DEFAULT_MODEL } } }
  const requests = new RequestIndex()
  const store = new MessageStore({
    events: deps.hub,
    ctx,
    publish: (payload, directory, tenant) => broadcast.publish({ directory, project: DEFAULT_PROJECT, payload }, tenant),
    log,
    requests,
  })
  const sessions = new OpencodeSessions({
    sessionStore: deps.sessionStore ?? new DocumentSessionStore(),
    store,
    runners: deps.runners,
    broadcast,
    hub: deps.hub,
    ctx,
    ids,
    version: SERVICE_VERSION,
    workBase: deps.workBase,
    log,
    owners: deps.owners,
  })
  const tenant = deps.tenant ?? (() => DEFAULT_TENANT)
  const steering = new OpencodeSteering({ sessions, store, runners: deps.runners, requests, log, busy: deps.sessionBusy })
  const context: RouteContext = { sessions, broadcast, streams, ids, heartbeatMs, defaultProvider: DEFAULT_PROVIDER, tenant }

  // Open event streams would hold the server's close forever.
  app.addHook('preClose', async () => streams.closeAll())
  app.addHook('onClose', async () => store.closeAll())

  await app.register(async (scope) => {
    acceptEmptyJson(scope)
    scope.setErrorHandler((err, request, reply) => {
      const { status, body } = toNamedError(err)
      if (status >= 500) log.error({ err, url: request.url }, 'OpenCode route failed')
      return reply.code(status).send(body)
    })
    sessionRoutes(scope, context)
    promptRoutes(scope, context)
    eventRoutes(scope, context)
    steeringRoutes(scope, { steering, tenant, workBase: deps.workBase })
    steeringV2Routes(scope, { steering, tenant, workBase: deps.workBase })
    configRoutes(scope, {
      runners: deps.runners,
      version: SERVICE_VERSION,
      auth: deps.auth ?? Boolean(process.env.SERVICE_API_KEY || process.env.SERVICE_API_KEYS),
      log,
    })
    instanceRoutes(scope, {
      version: SERVICE_VERSION,
      workBase: deps.workBase,
      provider: DEFAULT_PROVIDER,
      model: DEFAULT_MODEL,
      engines: engineNames(deps.runners, now),
      agent: DEFAULT_AGENT,
      startedAt: now(),
    })
  })
}

/**
 * OpenCode clients send `Content-Type: application/json` with no body (e.g.
 * `session.create()`); fastify would refuse that. Here an empty body is no
 * body; otherwise the body must be UTF-8 JSON (gateway/json-body.ts).
 */
function acceptEmptyJson(scope: FastifyInstance): void {
  strictJsonBody(scope, { emptyIsUndefined: true })
}
