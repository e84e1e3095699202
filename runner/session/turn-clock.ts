/**
 * A turn's `engine.timeout`, which does not run while the turn waits for a
 * person (a permission request or a question): paused then, it goes on with
 * the time that was left.
 */
export class TurnClock {
  readonly #onTimeout: () => void
  readonly #now: () => number
  #left: number
  #since = 0
  #timer: NodeJS.Timeout | undefined

  constructor(limitMs: number, onTimeout: () => void, now: () => number = Date.now) {
    this.#left = limitMs
    this.#onTimeout = onTimeout
    this.#now = now
    this.#run()
  }

  /** Milliseconds left (while paused, what is kept for later). */
  get leftMs(): number {
    return this.#timer === undefined ? this.#left : Math.max(0, this.#left - (this.#now() - this.#since))
  }

  get paused(): boolean {
    return this.#timer === undefined
  }

  pause(): void {
    if (this.#timer === undefined) return
    this.#left = this.leftMs
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  resume(): void {
    if (this.#timer === undefined) this.#run()
  }

  clear(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#left = 0
  }

  #run(): void {
    this.#since = this.#now()
    this.#timer = setTimeout(this.#onTimeout, this.#left)
  }
}
