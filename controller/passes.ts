import type { Clock } from './clock.ts'

/** The first back-off after a failed pass; it doubles with each failure in a row. */
export const FIRST_BACKOFF_MS = 200
/** The longest back-off. */
export const MAX_BACKOFF_MS = 30_000
/** After a conflict the next pass comes this soon: the cache catches up first. */
export const SOON_MS = 50

export interface PassLoopOptions {
  clock: Clock
  /** Passes run only while this holds (this replica leads). */
  leading: () => boolean
  /** One reconcile pass. */
  pass: () => Promise<void>
}

/**
 * When reconcile passes run: one at a time, triggers during a pass coalescing
 * into one more, and a timer for the next one due (a resync, a deadline, a
 * back-off after failures).
 */
export class PassLoop {
  readonly #clock: Clock
  readonly #leading: () => boolean
  readonly #pass: () => Promise<void>
  #running: Promise<void> | undefined
  #dirty = false
  #cancelWake: (() => void) | undefined
  #wakeAt = Infinity
  /** Failed passes in a row. */
  #failures = 0

  constructor(options: PassLoopOptions) {
    this.#clock = options.clock
    this.#leading = options.leading
    this.#pass = options.pass
  }

  /** Asks for a pass soon; passes never overlap, and triggers during a pass coalesce into one more. */
  trigger(): void {
    if (!this.#leading()) return
    if (this.#running) {
      this.#dirty = true
      return
    }
    this.#running = this.#loop().finally(() => {
      this.#running = undefined
      // A trigger after the loop's last look at #dirty, before this callback, must not be lost.
      if (this.#dirty) this.trigger()
    })
  }

  /** Resolves when no pass runs or is due. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running
  }

  /** Schedules a pass at `at` unless one is due sooner. */
  wake(at: number): void {
    if (!this.#leading() || at >= this.#wakeAt) return
    this.#cancelWake?.()
    this.#wakeAt = at
    this.#cancelWake = this.#clock.after(Math.max(0, at - this.#clock.now()), () => {
      this.#wakeAt = Infinity
      this.#cancelWake = undefined
      this.trigger()
    })
  }

  /** Another pass after the current one (a conflict: the cache catches up first). */
  soon(): void {
    this.wake(this.#clock.now() + SOON_MS)
  }

  /** A pass failed: the next comes after a back-off that doubles with each failure in a row. */
  backoff(): void {
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** this.#failures++)
    this.wake(this.#clock.now() + delay)
  }

  /** A pass went through: the next failure backs off from the start. */
  succeeded(): void {
    this.#failures = 0
  }

  /** Leadership ended: no pass is due. */
  cancel(): void {
    this.#cancelWake?.()
    this.#wakeAt = Infinity
  }

  async #loop(): Promise<void> {
    do {
      this.#dirty = false
      await this.#pass()
    } while (this.#dirty && this.#leading())
  }
}
