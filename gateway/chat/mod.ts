import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'
import { ChatAdapter } from './adapter.ts'
import { RobotClient } from './client.ts'
import type { ChatSettings } from './config.ts'
import { registerCallbackRoutes } from './routes.ts'
import { ChatSessions, type Every } from './sessions.ts'

/** The chat-platform adapter (spec §4.4): webhook in, robot API out. */

export interface ChatDeps {
  /** The enabled `chat` config section. */
  settings: ChatSettings
  runners: Runners
  hub: SessionHub
  log: Logger
  /** Claims each adapter session for `settings.tenant` (gateway/auth/owners.ts); none: no tenancy. */
  admit?: ((tenant: string, sessionId: string) => Promise<void>) | undefined
  /** Test seams; the defaults are the real clock, timers and fetch. */
  now?: () => number
  every?: Every
  sleep?: (ms: number) => Promise<void>
  fetch?: typeof fetch
  newSessionId?: () => string
}

/** A fastify plugin: the callback routes, the session table and its sweep, the robot API client. */
export async function registerChat(app: FastifyInstance, deps: ChatDeps): Promise<void> {
  const { settings, runners, hub } = deps
  const log = deps.log.child({ component: 'chat' })
  if (settings.callback_key !== undefined) {
    log.warn('chat.callback_key is set, but callbacks are read as plain JSON; encrypted callbacks are not supported')
  }
  const robot = new RobotClient({
    apiUrl: settings.api_url,
    appKey: settings.app_key,
    appSecret: settings.app_secret,
    attempts: settings.send_attempts,
    retryDelayMs: settings.retry_delay,
    requestTimeoutMs: settings.request_timeout,
    log,
    ...(deps.sleep && { sleep: deps.sleep }),
    ...(deps.now && { now: deps.now }),
    ...(deps.fetch && { fetch: deps.fetch }),
  })
  const sessions = new ChatSessions({
    idleMs: settings.idle_timeout,
    close: async (sessionId) => {
      await runners.send({ type: 'close', session_id: sessionId })
    },
    log,
    ...(deps.now && { now: deps.now }),
    ...(deps.newSessionId && { newSessionId: deps.newSessionId }),
  })
  const admit = deps.admit
  const turns = { runners, hub, ...(admit && { admit: (sessionId: string) => admit(settings.tenant, sessionId) }) }
  const adapter = new ChatAdapter({ settings, turns, sessions, robot, log })
  registerCallbackRoutes(app, { settings, adapter, log, ...(deps.now && { now: deps.now }) })
  const stopSweeping = sessions.startSweeping(settings.sweep_interval, deps.every)
  app.addHook('onClose', async () => {
    stopSweeping()
  })
  log.info({ sweep_ms: settings.sweep_interval, idle_ms: settings.idle_timeout, format: settings.message_format }, 'chat adapter enabled')
}

export { CALLBACK_PATH } from './routes.ts'
export { ChatConfigSchema } from './config.ts'
export type { ChatConfig, ChatSettings } from './config.ts'
