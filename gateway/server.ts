import websocket from '@fastify/websocket'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Bus } from '../bus/mod.ts'
import { MemoryDocuments, MemoryRegistry, type Documents, type EventLog, type RunnerLeases, type SessionRegistry, type State } from '../state/mod.ts'
import { AuthConfigSchema, tenancyEnabled, type AuthConfig } from './auth/config.ts'
import { registerCors } from './auth/cors.ts'
import { OriginPolicy } from './auth/origins.ts'
import { SessionOwners, type TenantClaim } from './auth/owners.ts'
import { registerChat, type ChatConfig } from './chat/mod.ts'
import { registerApiDocs } from './docs/openapi.ts'
import { registerConsole } from './console/route.ts'
import { clientError, frameworkError } from './errors.ts'
import { registerGuard } from './guard.ts'
import { strictJsonBody } from './json-body.ts'
import type { GatewayLifecycle } from './lifecycle.ts'
import { ActiveSessions } from './limits/active-sessions.ts'
import { AdmittingRunners } from './limits/admission.ts'
import { capConnectionsPerAddress } from './limits/connections.ts'
import { hardFrameLimit, LimitsConfigSchema, type LimitsConfig } from './limits/config.ts'
import { registerNative, SessionDirectory } from './native/mod.ts'
import type { GatewayObserver } from './observer.ts'
import { DocumentSessionStore, registerOpencode } from './opencode/mod.ts'
import { useZodRouteSchemas } from './route-schemas.ts'
import { RunnerClient } from './runner-client.ts'
import { SessionHub } from './session-hub.ts'
import { TurnWatchdog } from './turns/watchdog.ts'

export interface GatewayOptions {
  bus: Bus
  subjectPrefix: string
  requestTimeoutMs: number
  log: Logger
  /** The sandbox base directory (absolute), so REST answers can name a session's directory. */
  workBase?: string | undefined
  /** The `chat` config section; its routes are registered when enabled. */
  chat?: ChatConfig | undefined
  /** The service's lifecycle: while it drains, new turns and streams are refused. */
  lifecycle?: GatewayLifecycle | undefined
  /** API keys, origins, limits and keep-alive; default: no keys, default limits. */
  security?: SecurityOptions | undefined
  /** Probes, /metrics and request timing (observability/). */
  observability?: GatewayObserver | undefined
  /** The session registry (owners, for recovery), the event log (replay) and document buckets; default: a registry of its own, no replay. */
  state?: { registry: SessionRegistry; leases?: RunnerLeases | undefined; events?: EventLog | undefined; documents?: State['documents'] } | undefined
  /**
   * Where sessions' tenants are kept when `auth.tenants` is set (gateway/auth/owners.ts); default: the
   * state's durable `tenants` document bucket (JetStream in production, a file in dev mode), memory without state.
   */
  tenantClaims?: Documents<TenantClaim> | undefined
}

/** The `auth` and `limits` sections, the keep-alive periods of `server`, and the bind address. */
export interface SecurityOptions {
  auth: AuthConfig
  limits: LimitsConfig
  /** WebSocket ping period (0 = none). */
  pingIntervalMs: number
  /** task_boundary pulse period (0 = none). */
  taskPulseMs: number
  /** HTTP request timeouts (`server.request_timeout`, `server.headers_timeout`); default 30 s and 10 s. */
  http?: HttpTimeouts | undefined
  /** Bind address, for the warning of a service open to the network. */
  host?: string | undefined
  /** The shape /ws/v1/agent speaks unless a client asks (`server.ws_dialect`); default native. */
  wsDialect?: 'native' | 'hotplex' | undefined
  /** The rate limiter's clock (tests). */
  now?: () => number
}

/** How long a request may take to arrive: all of it, and its request line and headers. */
export interface HttpTimeouts {
  /** 0 = no limit. */
  requestTimeoutMs: number
  headersTimeoutMs: number
}

const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000 }

const DEFAULT_SECURITY: SecurityOptions = {
  auth: AuthConfigSchema.parse({}),
  limits: LimitsConfigSchema.parse({}),
  pingIntervalMs: 30_000,
  taskPulseMs: 30_000,
}

/** How often the owners of running turns this gateway follows are checked for life. */
const OWNER_CHECK_MS = 1_000

/** How long clients get to answer the close of a shutdown before their sockets are cut. */
const WS_CLOSE_WAIT_MS = 1_000
/** How long requests still in flight at close may take before their connections are cut. */
const FORCE_CLOSE_MS = 2_000

/** The gateway's HTTP server with every client surface registered. */
export async function buildGateway(options: GatewayOptions): Promise<FastifyInstance> {
  const { bus, log } = options
  const security = options.security ?? DEFAULT_SECURITY
  const timeouts = nodeTimeouts(security.http ?? DEFAULT_HTTP_TIMEOUTS)
  const app = Fastify({
    loggerInstance: log.child({ component: 'http' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Session ids in paths may be up to 256 characters.
    routerOptions: { maxParamLength: 300 },
    bodyLimit: security.limits.max_body,
    // A request that trickles in (its body, say) is answered 408 and closed: it cannot hold a connection for ever.
    requestTimeout: timeouts.requestTimeout,
    http: { headersTimeout: timeouts.headersTimeout, connectionsCheckingInterval: timeouts.checkEvery },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
  })
  capConnectionsPerAddress(app.server, security.limits.max_connections_per_ip, (address, open) =>
    log.warn({ component: 'http', ip: address, open }, 'connection refused: limits.max_connections_per_ip reached for this address'),
  )
  const state = options.state ?? { registry: new MemoryRegistry() }
  const hub = new SessionHub(bus, options.subjectPrefix, log, state.events)
  const active = new ActiveSessions(security.limits.max_active_sessions, (sessionId, listener) => hub.attach(sessionId, listener))
  const runners = new AdmittingRunners(
    new RunnerClient(bus, options.subjectPrefix, options.requestTimeoutMs, state.registry, state.leases),
    active,
    options.lifecycle,
  )
  options.lifecycle?.addWork(() => active.count)
  const watchdog = new TurnWatchdog(hub, runners, OWNER_CHECK_MS, log.child({ component: 'watchdog' }))
  app.addHook('onClose', async () => watchdog.stop())
  await app.register(websocket, {
    // Frames over limits.max_frame are answered with an error event; only far bigger ones make `ws` close with 1009.
    options: { maxPayload: hardFrameLimit(security.limits.max_frame) },
    preClose(done) {
      const clients = [...this.websocketServer.clients]
      for (const client of clients) client.close(1001, 'server shutting down')
      setTimeout(() => clients.forEach((client) => client.terminate()), WS_CLOSE_WAIT_MS).unref()
      this.websocketServer.close(() => done())
    },
  })
  // A request still waiting on a turn (a blocking prompt, say) must not hold the close for ever.
  app.addHook('preClose', async () => void setTimeout(() => app.server.closeAllConnections(), FORCE_CLOSE_MS).unref())
  // Before the guard: a preflight carries no key and is answered in the CORS hook.
  await registerCors(app, new OriginPolicy(security.auth.allowed_origins))
  // After the websocket plugin (its onRequest hook marks upgrade requests, so a refused handshake's socket is closed)
  // and before every route, so that the guard's hook and error handling cover them all.
  const guard = registerGuard(app, { ...security, log, lifecycle: options.lifecycle })
  const owners = await sessionOwners(options, security.auth, state)
  const admit = owners.enabled ? (request: FastifyRequest, sessionId: string) => owners.admit(guard.tenant(request), sessionId) : undefined
  strictJsonBody(app)
  useZodRouteSchemas(app)
  // Before every route: it lists the routes as they are registered.
  await registerApiDocs(app)
  options.observability?.register(app)

  await registerNative(app, {
    runners,
    hub,
    log,
    admit,
    directory: new SessionDirectory({ registry: state.registry, events: state.events, owners, runners }),
    tenant: guard.tenant,
    websocket: {
      frames: guard.frames,
      pingIntervalMs: security.pingIntervalMs,
      taskPulseMs: security.taskPulseMs,
      maxSendBuffer: security.limits.ws_send_buffer,
      dialect: security.wsDialect,
      observeRequest: options.observability?.wsRequest,
    },
  })
  if (options.chat?.enabled) {
    await app.register(registerChat, {
      settings: options.chat,
      runners,
      hub,
      log,
      ...(owners.enabled && { admit: (tenant: string, sessionId: string) => owners.admit(tenant, sessionId) }),
    })
  }
  await registerOpencode(app, {
    runners,
    hub,
    log,
    workBase: options.workBase,
    auth: guard.keys.enabled,
    tenant: guard.tenant,
    ...(owners.enabled && { owners }),
    ...(state.documents && { sessionStore: new DocumentSessionStore(await state.documents('opencode')) }),
    // A steering request id this gateway has not seen is looked for in busy sessions only: asking an idle one would make a runner take it.
    sessionBusy: async (id: string) => (await state.registry.get(id))?.value.state === 'busy',
  })
  await registerConsole(app)
  return app
}

/**
 * Session ownership: with `auth.tenants`, claims in `options.tenantClaims`, else the state's `tenants`
 * bucket (shared by every gateway), else memory; a session that ran before tenants were configured
 * (a registry record or stored events, and no claim) is the tenant `default`'s. Without tenants, none.
 */
async function sessionOwners(options: GatewayOptions, auth: AuthConfig, state: NonNullable<GatewayOptions['state']>): Promise<SessionOwners> {
  if (!tenancyEnabled(auth)) return new SessionOwners()
  // Durable: in dev mode a file beside the markers, since a session's conversation outlives the process.
  const claims =
    options.tenantClaims ?? (state.documents ? await state.documents<TenantClaim>('tenants', { durable: true }) : new MemoryDocuments<TenantClaim>())
  const events = state.events
  return new SessionOwners({
    claims,
    existing: async (sessionId) => (await state.registry.get(sessionId)) !== undefined || (events !== undefined && (await events.lastSeq(sessionId)) > 0),
  })
}

/**
 * Node's timeouts from the configured ones. Node checks them every
 * `connectionsCheckingInterval` (30 s by default, far too coarse for a 10 s
 * headers timeout): here a quarter of the shortest, between 50 ms and 1 s.
 */
function nodeTimeouts(http: HttpTimeouts): { requestTimeout: number; headersTimeout: number; checkEvery: number } {
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = http.requestTimeoutMs > 0 ? Math.min(http.headersTimeoutMs, http.requestTimeoutMs) : http.headersTimeoutMs
  const checkEvery = Math.min(1_000, Math.max(50, Math.floor(headersTimeout / 4)))
  return { requestTimeout: http.requestTimeoutMs, headersTimeout, checkEvery }
}
