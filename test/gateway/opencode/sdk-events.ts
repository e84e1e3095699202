/**
 * Collects what an SDK event stream yields (`for await` over `stream`, as SDK
 * users write it) and waits for matching events.
 */
export class StreamCollector<T = any> {
  readonly events: T[] = []
  #done = false
  #waiters = new Set<() => void>()
  readonly finished: Promise<void>

  constructor(stream: AsyncIterable<T>) {
    this.finished = (async () => {
      try {
        for await (const event of stream) {
          this.events.push(event)
          for (const wake of this.#waiters) wake()
        }
      } catch {
        // aborted
      } finally {
        this.#done = true
        for (const wake of this.#waiters) wake()
      }
    })()
  }

  next(match: (event: T) => boolean, timeoutMs = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.find(match)
        if (found !== undefined) return finish(() => resolve(found))
        if (this.#done) return finish(() => reject(new Error(`stream ended without a match; last: ${JSON.stringify(this.events.slice(-5))}`)))
      }
      const timer = setTimeout(() => finish(() => reject(new Error(`no matching event in ${timeoutMs} ms; last: ${JSON.stringify(this.events.slice(-5))}`))), timeoutMs)
      const finish = (done: () => void) => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        done()
      }
      this.#waiters.add(check)
      check()
    })
  }
}
