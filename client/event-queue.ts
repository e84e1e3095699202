/**
 * An async iterable fed by pushes: the consumer reads at its own pace, the
 * producer never waits. Ends after `end()` once drained, or throws `fail()`'s
 * error; a consumer that stops early (break) calls `onReturn`.
 */
export class EventQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = []
  #waiting: { resolve: (result: IteratorResult<T>) => void; reject: (err: unknown) => void } | undefined
  #ended = false
  #error: unknown
  readonly #onReturn: (() => void) | undefined

  constructor(onReturn?: () => void) {
    this.#onReturn = onReturn
  }

  get ended(): boolean {
    return this.#ended
  }

  push(item: T): void {
    if (this.#ended) return
    const waiting = this.#waiting
    if (waiting === undefined) this.#items.push(item)
    else {
      this.#waiting = undefined
      waiting.resolve({ value: item, done: false })
    }
  }

  end(): void {
    this.#finish(undefined)
  }

  fail(error: unknown): void {
    this.#finish(error ?? new Error('failed'))
  }

  #finish(error: unknown): void {
    if (this.#ended) return
    this.#ended = true
    this.#error = error
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting === undefined) return
    if (error === undefined) waiting.resolve({ value: undefined, done: true })
    else waiting.reject(error)
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift()!, done: false })
    if (this.#ended) return this.#error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.#error)
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }))
  }

  /** Leaves the iterator: what is queued is dropped, and a `next()` still waiting ends. */
  return(): Promise<IteratorResult<T>> {
    if (!this.#ended) {
      this.#items.length = 0
      this.#finish(undefined)
      this.#onReturn?.()
    }
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this
  }
}
