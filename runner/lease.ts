import os from 'node:os'
import type { Logger } from 'pino'
import type { RunnerLeases } from '../state/mod.ts'

/** Share of the TTL without a renewal after which a runner fences itself (before the lease can lapse). */
const FENCE_SHARE = 0.75
/** A renewal already on its way when the fence is due may still land up to this share of the TTL. */
const LAST_CHANCE_SHARE = 0.9

export interface LeaseKeeperOptions {
  leases: RunnerLeases
  runnerId: string
  maxSessions: number
  ttlMs: number
  sessions(): number
  /** Called when no renewal went through for FENCE_SHARE of the TTL (LAST_CHANCE_SHARE with one on its way): others may own our sessions soon. */
  onLost(): void
  /** Called after each renewal that went through. */
  onRenewed?(): void
  /**
   * False for the only runner on its state (dev mode: gateway and runner in one process, state in
   * memory): nobody can take its sessions over, so a stalled event loop must not end them. Default true.
   */
  fences?: boolean
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
  /** When the newest renewal that went through was sent: the lease stands until at least a TTL after. */
  #lastRenewed = 0
  /** Renewals sent and not answered yet. */
  #inFlight = 0
  #stopped = false
  #standing = true

  constructor(options: LeaseKeeperOptions) {
    this.#options = options
  }

  /** False from a fence until a renewal goes through again: others may take what this runner would claim. */
  get standing(): boolean {
    return this.#standing
  }

  /**
   * Whether the lease surely stands at this moment. Past the fence deadline it fences at once,
   * even if the fence timer has not fired: a process thawed after a freeze (SIGSTOP, a stalled
   * VM) handles its pending I/O before its timers, and must not publish a word for sessions
   * that another runner may own by now.
   */
  holds(): boolean {
    if (this.#stopped || this.#options.fences === false) return true
    if (!this.#standing) return false
    const age = Date.now() - this.#lastRenewed
    if (age < this.#options.ttlMs * FENCE_SHARE) return true
    if (age < this.#options.ttlMs * LAST_CHANCE_SHARE) {
      // Late (a stalled event loop), but the lease stands until its TTL: renew at once, and the
      // fence timer gives that renewal until LAST_CHANCE_SHARE, as it would one already on its way.
      if (this.#inFlight === 0) void this.#tick()
      return true
    }
    this.#fenceDue(true)
    return false
  }

  async start(): Promise<void> {
    await this.#renew()
    this.#timer = setInterval(() => void this.#tick(), Math.max(100, Math.floor(this.#options.ttlMs / 3)))
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    this.#stopped = true
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
    // Sent past the last-chance deadline with no fence run yet: the process was frozen and its renewal
    // timer ran first on thaw. The lease may have lapsed and another runner taken the sessions, and this
    // renewal would land before the CLIs' buffered output is read (holds() would then say yes): fence first.
    if (this.#lastRenewed > 0 && sent - this.#lastRenewed >= this.#options.ttlMs * LAST_CHANCE_SHARE) this.#fenceDue(true)
    this.#inFlight++
    try {
      await leases.renew({
        runner_id: runnerId,
        host: os.hostname(),
        pid: process.pid,
        sessions: this.#options.sessions(),
        max_sessions: maxSessions,
        renewed_at: sent,
      })
    } finally {
      this.#inFlight--
    }
    // An older renewal answering after a newer one tells nothing new; one answering after its own
    // fence deadline leaves too little of the lease to count on.
    if (this.#stopped || sent <= this.#lastRenewed || sent + this.#options.ttlMs * FENCE_SHARE <= Date.now()) return
    this.#lastRenewed = sent
    this.#standing = true
    // Others may take our sessions once the lease lapses (TTL after this write): stop running them before that.
    this.#armFence(sent + this.#options.ttlMs * FENCE_SHARE, false)
    this.#options.onRenewed?.()
  }

  #armFence(at: number, lastChance: boolean): void {
    clearTimeout(this.#fence)
    this.#fence = setTimeout(() => this.#fenceDue(lastChance), Math.max(0, Math.floor(at - Date.now())))
    this.#fence.unref()
  }

  /**
   * No renewal went through for FENCE_SHARE of the TTL. One still on its way (a busy machine, a
   * stalled event loop) gets until LAST_CHANCE_SHARE: landing, it renews the lease and re-arms the fence.
   */
  #fenceDue(lastChance: boolean): void {
    if (this.#stopped || this.#options.fences === false) return
    if (!lastChance && this.#inFlight > 0) return this.#armFence(this.#lastRenewed + this.#options.ttlMs * LAST_CHANCE_SHARE, true)
    if (!this.#standing) return
    clearTimeout(this.#fence)
    this.#standing = false
    this.#options.onLost()
  }
}
