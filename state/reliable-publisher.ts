/**
 * Publishes items with at most `window` in flight, retrying each failed one
 * after a back-off until it is stored. Order is kept while nothing fails; a
 * retried item may land after later ones, which is why every event carries
 * its sequence and readers order by it. Safe to retry because each item has a
 * message id the server deduplicates on. An item the server refuses for good
 * (isPermanent) is dropped and reported, not retried; so is one whose
 * publisher may no longer send it (isStale), before each try.
 */
export interface ReliablePublisherOptions<T> {
  /**
   * Sends the item; `done` is called once, later (never from within publish), with the error when
   * it was not stored. A callback, not a promise: one item per relayed event.
   */
  publish(item: T, done: (error?: unknown) => void): void
  /** Items in flight at once. */
  window: number
  /** Wait before the n-th consecutive retry round (n ≥ 1). */
  backoffMs(attempt: number): number
  onRetry?(error: unknown, waiting: number): void
  /** A failure no retry can fix (the server refuses the item for good): the item is dropped, the rest go on. */
  isPermanent?(error: unknown): boolean
  onDrop?(item: T, error: unknown): void
  /** Asked before each try: an item its publisher may no longer send (it lost the right) is dropped. */
  isStale?(item: T): boolean
  onStale?(item: T): void
}

export class ReliablePublisher<T> {
  readonly #options: ReliablePublisherOptions<T>
  #queue: T[] = []
  #retry: T[] = []
  #inFlight = 0
  #attempt = 0
  #timer: NodeJS.Timeout | undefined
  #idle: (() => void)[] = []
  #closed = false

  constructor(options: ReliablePublisherOptions<T>) {
    this.#options = options
  }

  /** Items not yet stored. */
  get pending(): number {
    return this.#queue.length + this.#retry.length + this.#inFlight
  }

  push(item: T): void {
    this.#queue.push(item)
    this.#pump()
  }

  /** Resolves when every item pushed so far is stored. */
  flush(): Promise<void> {
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  /** Stops retrying; items not stored by now are dropped. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#queue = []
    this.#retry = []
    this.#settle()
  }

  #pump(): void {
    while (!this.#closed && this.#timer === undefined && this.#inFlight < this.#options.window && this.#queue.length > 0) {
      const item = this.#queue.shift()!
      if (this.#options.isStale?.(item)) this.#options.onStale?.(item)
      else this.#send(item)
    }
    this.#settle()
  }

  #send(item: T): void {
    this.#inFlight++
    this.#options.publish(item, (error) => {
      this.#inFlight--
      if (error === undefined) {
        this.#attempt = 0
        return this.#pump()
      }
      if (this.#closed) return this.#settle()
      if (this.#options.isPermanent?.(error)) {
        // Retrying would hold back every later item for ever.
        this.#options.onDrop?.(item, error)
        return this.#pump()
      }
      this.#retry.push(item)
      this.#scheduleRetry(error)
    })
  }

  #scheduleRetry(error: unknown): void {
    if (this.#timer !== undefined) return
    this.#attempt++
    this.#options.onRetry?.(error, this.pending)
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      // Retried items go first: they are the oldest.
      this.#queue.unshift(...this.#retry.splice(0))
      this.#pump()
    }, this.#options.backoffMs(this.#attempt))
  }

  #settle(): void {
    if (this.pending > 0) return
    for (const resolve of this.#idle.splice(0)) resolve()
  }
}
