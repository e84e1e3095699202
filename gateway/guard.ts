import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { ServiceError } from '../contract/mod.ts'
import type { Lifecycle } from '../service/lifecycle.ts'
import { CALLBACK_PATH } from './chat/mod.ts'
import { tenantKeys, type AuthConfig } from './auth/config.ts'
import { authenticate, headerValues, presentedKeys, unauthorizedMessage, type Surface } from './auth/credentials.ts'
import { warnIfExposed } from './auth/exposure.ts'
import { ApiKeys } from './auth/keys.ts'
import { OriginPolicy } from './auth/origins.ts'
import { registerErrorHandling } from './errors.ts'
import type { LimitsConfig } from './limits/config.ts'
import { frameAdmission, type FrameAdmission } from './limits/frame-admission.ts'
import { RateLimitedError, RateLimiter } from './limits/rate-limiter.ts'

/** The native WebSocket route. */
export const WS_PATH = '/ws/v1/agent'

/**
 * Routes served without an API key, origin check or rate limit:
 * - the probes: orchestrators (kubelet, load balancers) call them without
 *   secrets, and they tell only up/ready and the version;
 * - the chat callback: the chat platform cannot send our key; every callback
 *   is checked by its own HMAC signature (gateway/chat/README.md).
 * `/metrics` is not open: it tells how the service is used (sessions, errors,
 * routes); Prometheus sends the key (`authorization: {credentials: <key>}`).
 */
export const OPEN_ROUTES: ReadonlySet<string> = new Set(['/health', '/health/live', '/health/ready', CALLBACK_PATH])

/** Long-lived streams; while the service drains, new ones are refused (the load balancer sends them elsewhere). */
const STREAM_ROUTES: ReadonlySet<string> = new Set([WS_PATH, '/event', '/global/event', '/v1/sessions/:id/events'])

export interface GuardOptions {
  auth: AuthConfig
  limits: LimitsConfig
  log: Logger
  lifecycle?: Lifecycle | undefined
  /** The bind address, for the start-up warning of an open service. */
  host?: string | undefined
  /** The rate limiter's clock (tests). */
  now?: () => number
}

/** What the routes need from the guard. */
export interface Guard {
  readonly keys: ApiKeys
  readonly limiter: RateLimiter
  /** The frame admission of the WebSocket connection this (handshake) request opened. */
  frames(request: FastifyRequest): FrameAdmission
  /** The tenant of the key the request was admitted with (`default` without keys). */
  tenant(request: FastifyRequest): string
}

/**
 * Access control and request limits for every route, registered before the
 * routes so that its hook covers all of them (plugins included):
 * origin (403) → API key (401) → draining streams (503) → rate (429), plus
 * the service's error and not-found handlers. A refusal is thrown, so each
 * surface answers it in its own error shape, with `Connection: close`.
 */
export function registerGuard(app: FastifyInstance, options: GuardOptions): Guard {
  const log = options.log.child({ component: 'guard' })
  const configured = tenantKeys(options.auth)
  const keys = new ApiKeys(
    configured.map((one) => one.key),
    configured.map((one) => one.tenant),
  )
  const origins = new OriginPolicy(options.auth.allowed_origins)
  const limiter = new RateLimiter({ rate: options.limits.rate, burst: options.limits.burst, ...(options.now && { now: options.now }) })
  const principals = new WeakMap<FastifyRequest, string>()
  const tenants = new WeakMap<FastifyRequest, string>()
  warnIfExposed(log, options.host, keys.enabled)

  registerErrorHandling(app, { log, retryAfterMs: options.limits.retry_after })

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url
    if (route !== undefined && OPEN_ROUTES.has(route)) return
    try {
      admit(request, reply, route)
    } catch (err) {
      // A refused request is answered at once, body unread; its connection is then closed rather than
      // kept reading whatever body the client still sends (it could trickle one for ever).
      reply.header('connection', 'close')
      throw err
    }
  })

  function admit(request: FastifyRequest, reply: FastifyReply, route: string | undefined): void {
    const surface: Surface = route === WS_PATH && isUpgrade(request) ? 'websocket' : 'http'
    if (!origins.allows(request.headers.origin)) {
      log.warn({ route, origin: String(request.headers.origin).slice(0, 200), ip: request.ip }, 'request from a browser origin that is not allowed')
      throw new ServiceError('FORBIDDEN_ORIGIN', 'this browser origin is not allowed (SERVICE_ALLOWED_ORIGINS)')
    }
    const outcome = authenticate(keys, presentedKeys(surface, headerValues(request.raw.rawHeaders), request.query))
    if (!outcome.ok) {
      log.warn({ route, surface, reason: outcome.reason, carriers: outcome.carriers, ip: request.ip }, 'request refused: API key missing or invalid')
      throw new ServiceError('UNAUTHORIZED', unauthorizedMessage(surface, outcome.reason))
    }
    if (route !== undefined && STREAM_ROUTES.has(route) && options.lifecycle?.draining) {
      throw new ServiceError('SHUTTING_DOWN', 'the service is shutting down; connect to another instance')
    }
    tenants.set(request, outcome.tenant)
    const principal = outcome.key >= 0 ? `key:${outcome.key}` : `ip:${request.ip}`
    principals.set(request, principal)
    try {
      limiter.take(principal)
    } catch (err) {
      if (err instanceof RateLimitedError) reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))))
      throw err
    }
  }

  return {
    keys,
    limiter,
    frames: (request) => frameAdmission({ maxFrame: options.limits.max_frame, limiter, key: principals.get(request) ?? `ip:${request.ip}` }),
    tenant: (request) => {
      // Every guarded request has one (the hook ran first); asking for another would be a bug, not a reason to guess.
      const tenant = tenants.get(request)
      if (tenant === undefined) throw new ServiceError('INTERNAL', 'no tenant was decided for this request')
      return tenant
    },
  }
}

function isUpgrade(request: FastifyRequest): boolean {
  return String(request.headers.upgrade ?? '').toLowerCase() === 'websocket'
}
