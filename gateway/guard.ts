import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { ServiceError, toServiceError } from '../contract/mod.ts'
import { tenantKeys, type AuthConfig } from './auth/config.ts'
import { authenticate, headerValues, presentedKeys, unauthorizedMessage, type Surface } from './auth/credentials.ts'
import { warnIfExposed } from './auth/exposure.ts'
import { ApiKeys } from './auth/keys.ts'
import { OriginPolicy } from './auth/origins.ts'
import { registerErrorHandling, setRetryAfter } from './errors.ts'
import type { GatewayLifecycle } from './lifecycle.ts'
import type { LimitsConfig } from './limits/config.ts'
import { frameAdmission, type FrameAdmission } from './limits/frame-admission.ts'
import { RateLimiter } from './limits/rate-limiter.ts'
import type { RouteAccess } from './route-config.ts'

export interface GuardOptions {
  auth: AuthConfig
  limits: LimitsConfig
  log: Logger
  lifecycle?: GatewayLifecycle | undefined
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
 * Each route says in its `config` how it is treated (gateway/route-config.ts):
 * open routes skip all of it; `/metrics` is not open, since it tells how the
 * service is used (Prometheus sends the key).
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
    const access: RouteAccess = request.routeOptions.config
    if (access.access === 'open') return
    try {
      admit(request, access)
    } catch (err) {
      // A refused request is answered at once, body unread; its connection is then closed rather than
      // kept reading whatever body the client still sends (it could trickle one for ever).
      reply.header('connection', 'close')
      // Set here: the surfaces' own error handlers (OpenCode's, the chat callback's) do not.
      setRetryAfter(reply, toServiceError(err), options.limits.retry_after)
      throw err
    }
  })

  function admit(request: FastifyRequest, access: RouteAccess): void {
    const route = request.routeOptions.url
    const surface: Surface = access.websocket === true && isUpgrade(request) ? 'websocket' : 'http'
    if (!origins.allows(request.headers.origin)) {
      log.warn({ route, origin: String(request.headers.origin).slice(0, 200), ip: request.ip }, 'request from a browser origin that is not allowed')
      throw new ServiceError('FORBIDDEN_ORIGIN', 'this browser origin is not allowed (SERVICE_ALLOWED_ORIGINS)')
    }
    const outcome = authenticate(keys, presentedKeys(surface, headerValues(request.raw.rawHeaders), request.query))
    if (!outcome.ok) {
      log.warn({ route, surface, reason: outcome.reason, carriers: outcome.carriers, ip: request.ip }, 'request refused: API key missing or invalid')
      throw new ServiceError('UNAUTHORIZED', unauthorizedMessage(surface, outcome.reason))
    }
    if (access.stream === true && options.lifecycle?.draining) {
      throw new ServiceError('SHUTTING_DOWN', 'the service is shutting down; connect to another instance')
    }
    // The key in the query is a credential, not an input: routes with strict query schemas would refuse it.
    if (typeof request.query === 'object' && request.query !== null) delete (request.query as Record<string, unknown>).api_key
    tenants.set(request, outcome.tenant)
    const principal = outcome.key >= 0 ? `key:${outcome.key}` : `ip:${request.ip}`
    principals.set(request, principal)
    limiter.take(principal)
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
