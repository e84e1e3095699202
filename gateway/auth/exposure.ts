import { isIP } from 'node:net'
import type { Logger } from 'pino'

/** True for bind addresses only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare)
  return false
}

/**
 * The start-up warning of an open service: without an API key, anyone who
 * can reach a non-loopback address can run an agent — arbitrary commands —
 * on this machine. Logged at `warn` (the service still starts: a private
 * network or a proxy in front may be the user's choice). Returns whether it warned.
 */
export function warnIfExposed(log: Logger, host: string | undefined, keysEnabled: boolean): boolean {
  if (keysEnabled || host === undefined || isLoopback(host)) return false
  log.warn(
    { host, security: 'no_api_key' },
    `SECURITY WARNING: no API key is configured and the service listens on ${host}. ` +
      'Anyone who can reach this address can run agents, and so any command, on this machine. ' +
      'Set SERVICE_API_KEY (or SERVICE_API_KEYS), or bind to 127.0.0.1 (server.host).',
  )
  return true
}
