/**
 * The service's lifecycle state, shared by the parts that must react to a
 * shutdown: readiness (GET /health/ready turns 503 at once), admission (new
 * work is refused with SHUTTING_DOWN) and the shutdown sequence itself.
 *
 * One instance per started service (startService creates it and hands it to
 * the gateway and the runner), so several services in one test process do not
 * share a flag.
 */
export class Lifecycle {
  #draining = false
  readonly #listeners = new Set<() => void>()
  readonly #work = new Set<() => number>()

  /** True from the moment a shutdown began: readiness is false, new work is refused. */
  get draining(): boolean {
    return this.#draining
  }

  /** Starts draining (idempotent). Listeners run once, synchronously, in registration order. */
  drain(): void {
    if (this.#draining) return
    this.#draining = true
    for (const listener of [...this.#listeners]) {
      try {
        listener()
      } catch {
        // A listener's failure must not stop the shutdown of the others.
      }
    }
    this.#listeners.clear()
  }

  /** Calls `listener` when draining starts (at once if it already has); returns the unsubscribe function. */
  onDrain(listener: () => void): () => void {
    if (this.#draining) {
      listener()
      return () => {}
    }
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /**
   * Registers a source of running work (the gateway's active sessions, the
   * runner's busy sessions); a shutdown waits, within its grace period, until
   * every source counts 0. Returns the unregister function.
   */
  addWork(count: () => number): () => void {
    this.#work.add(count)
    return () => this.#work.delete(count)
  }

  /** The running work, summed over the sources. */
  get busy(): number {
    let total = 0
    for (const count of this.#work) total += count()
    return total
  }
}
