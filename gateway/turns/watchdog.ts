import type { Logger } from 'pino'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'

/** A running turn silent for this long may have events this gateway missed (checked again after as long). */
const QUIET_MS = 5_000

/**
 * Watches the sessions this gateway follows while a turn runs: when the
 * runner running it is gone (killed, its host lost), a live runner takes the
 * session over and ends the lost turn with a RUNNER_LOST error, so clients
 * waiting for the turn hear of it within about one period.
 */
export class TurnWatchdog {
  readonly #timer: NodeJS.Timeout
  #checking = false

  constructor(hub: SessionHub, runners: Runners, periodMs: number, log: Logger) {
    this.#timer = setInterval(() => {
      if (this.#checking) return
      const sessions = hub.sessionsWithTurnInFlight()
      if (sessions.length === 0) return
      for (const sessionId of sessions) hub.catchUp(sessionId, QUIET_MS)
      this.#checking = true
      void runners
        .recoverLost(sessions)
        .catch((err: unknown) => log.warn({ err }, 'cannot recover sessions whose runner is gone'))
        .finally(() => (this.#checking = false))
    }, periodMs)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
