/**
 * Runs `work` at most once at a time: a caller arriving while it runs shares
 * the run after it (it needs a result from after its call), so any number of
 * callers cost at most two runs.
 */
export class SharedRun<T> {
  readonly #work: () => Promise<T>
  #running: Promise<T> | undefined
  #next: Promise<T> | undefined

  constructor(work: () => Promise<T>) {
    this.#work = work
  }

  get(): Promise<T> {
    if (this.#next) return this.#next
    if (!this.#running) return this.#start()
    const next = this.#running.then(
      () => {},
      () => {},
    )
    this.#next = next.then(() => {
      this.#next = undefined
      return this.#start()
    })
    return this.#next
  }

  #start(): Promise<T> {
    const running = this.#work().finally(() => {
      if (this.#running === running) this.#running = undefined
    })
    this.#running = running
    return running
  }
}
