import os from 'node:os'
import type { Logger } from 'pino'
import type { RunnerLeases } from '../state/mod.ts'

/** Share of the TTL without a renewal after which a runner fences itself (before the lease can lapse). */
const FENCE_SHARE = 0.75

export interface LeaseKeeperOptions {
  leases: RunnerLeases
  runnerId: string
  maxSessions: number
  ttlMs: number
  sessions(): number
  /** Called when the lease could not be renewed for a whole TTL: others may own our sessions now. */
  onLost(): void
  log: Logger
}

/**
 * Keeps this runner's lease alive: renewed three times per TTL. A runner that
 * could not renew for three quarters of the TTL stops running its sessions
 * (fencing) before the lease can lapse and another runner take them over, so
 * no session ever runs twice.
 */
export class LeaseKeeper {
  readonly #options: LeaseKeeperOptions
  #timer: NodeJS.Timeout | undefined
  /** Fires when the lease was not renewed for FENCE_SHARE of its TTL. */
  #fence: NodeJS.Timeout | undefined
  #lastRenewed = 0

  constructor(options: LeaseKeeperOptions) {
    this.#options = options
  }

  async start(): Promise<void> {
    await this.#renew()
    this.#timer = setInterval(() => void this.#tick(), Math.max(100, Math.floor(this.#options.ttlMs / 3)))
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    clearTimeout(this.#fence)
    await this.#options.leases.release(this.#options.runnerId).catch(() => {})
  }

  async #tick(): Promise<void> {
    try {
      await this.#renew()
    } catch (err) {
      this.#options.log.warn({ err, silent_ms: Date.now() - this.#lastRenewed }, 'cannot renew the runner lease')
    }
  }

  async #renew(): Promise<void> {
    const { leases, runnerId, maxSessions } = this.#options
    const sent = Date.now()
    await leases.renew({ runner_id: runnerId, host: os.hostname(), pid: process.pid, sessions: this.#options.sessions(), max_sessions: maxSessions, renewed_at: sent })
    this.#lastRenewed = sent
    // Others may take our sessions once the lease lapses (TTL after this write): stop running them before that.
    clearTimeout(this.#fence)
    this.#fence = setTimeout(() => this.#options.onLost(), Math.floor(this.#options.ttlMs * FENCE_SHARE))
    this.#fence.unref()
  }
}
