import { Received } from '../../fixtures/received.ts'

/**
 * Collects what an SDK event stream yields (`for await` over `stream`, as SDK
 * users write it) and waits for matching events.
 */
export class StreamCollector<T = any> {
  readonly #received = new Received<T>('event')
  readonly events: T[] = this.#received.items
  readonly finished: Promise<void>

  constructor(stream: AsyncIterable<T>) {
    this.finished = (async () => {
      try {
        for await (const event of stream) this.#received.push(event)
      } catch {
        // aborted
      } finally {
        this.#received.end()
      }
    })()
  }

  /** The first event (seen or still to come) that matches. */
  next(match: (event: T) => boolean, timeoutMs = 15_000): Promise<T> {
    return this.#received.next(match, timeoutMs)
  }
}
