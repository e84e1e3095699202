/** Work a pass starts and does not wait for (Kubernetes Events, credential renewals); stopping waits for it. */
export class Background {
  readonly #running = new Set<Promise<unknown>>()

  /** Keeps `work` until it ends; it must not reject (its failures are its own to log). */
  track(work: Promise<unknown>): void {
    this.#running.add(work)
    void work.finally(() => this.#running.delete(work))
  }

  /** Resolves when everything tracked now has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#running])
  }
}
