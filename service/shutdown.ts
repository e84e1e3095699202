import type { Logger } from 'pino'
import type { Lifecycle } from './lifecycle.ts'

export interface ShutdownOptions {
  lifecycle: Lifecycle
  /** How long running work may go on (server.shutdown_grace). */
  graceMs: number
  /** Stops everything: every session's process groups, the HTTP server, the bus. */
  stop: () => Promise<void>
  log: Logger
  /** Aborting it ends the grace period at once (a second SIGTERM or SIGINT). */
  signal?: AbortSignal
  /** How often the running work is counted while waiting. */
  pollMs?: number
}

/**
 * The graceful shutdown (SIGTERM): draining starts at once — readiness turns
 * 503, new turns and new streams are refused with SHUTTING_DOWN — then the
 * running work (the lifecycle's sources: the gateway's active sessions, the
 * runner's busy sessions) may finish within the grace period; then `stop`
 * ends what is left. Returns whether everything finished within the grace.
 */
export async function gracefulShutdown(options: ShutdownOptions): Promise<boolean> {
  const { lifecycle, graceMs, log, signal } = options
  const pollMs = options.pollMs ?? 100
  lifecycle.drain()
  const running = lifecycle.busy
  log.info({ running, grace_ms: graceMs }, running > 0 ? 'draining: waiting for running turns' : 'draining: nothing running')
  const deadline = Date.now() + graceMs
  while (lifecycle.busy > 0 && Date.now() < deadline && !signal?.aborted) {
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())), signal)
  }
  const left = lifecycle.busy
  if (left > 0) log.warn({ running: left, grace_ms: graceMs, cut_short: signal?.aborted ?? false }, 'grace period over: stopping the sessions still running')
  await options.stop()
  return left === 0
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
