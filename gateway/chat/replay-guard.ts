/**
 * Remembers the signatures of accepted message callbacks while their
 * timestamps are inside the window, so that a captured callback replayed
 * within the window is recognised (outside it, the timestamp check rejects it).
 */
export class ReplayGuard {
  readonly #windowMs: number
  readonly #maxEntries: number
  /** signature → epoch ms after which it can be forgotten; Map order is insertion order. */
  readonly #seen = new Map<string, number>()

  constructor(windowMs: number, maxEntries = 100_000) {
    this.#windowMs = windowMs
    this.#maxEntries = maxEntries
  }

  /** Records the signature; false when it was already recorded (a replay). */
  firstSeen(signature: string, timestampMs: number, now: number): boolean {
    this.#forget(now)
    if (this.#seen.has(signature)) return false
    // A full table drops its oldest entry: bounded memory under a flood of valid callbacks.
    if (this.#seen.size >= this.#maxEntries) this.#seen.delete(this.#seen.keys().next().value!)
    this.#seen.set(signature, timestampMs + this.#windowMs)
    return true
  }

  get size(): number {
    return this.#seen.size
  }

  /**
   * Drops expired entries from the oldest on, stopping at the first live one.
   * One left behind is harmless: a callback with its signature has its
   * timestamp, so the window check rejects it before it gets here.
   */
  #forget(now: number): void {
    for (const [signature, until] of this.#seen) {
      if (until >= now) return
      this.#seen.delete(signature)
    }
  }
}
