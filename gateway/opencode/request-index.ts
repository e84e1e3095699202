/** Request ids remembered at most; the oldest go first (a miss costs asking the runners: steering.ts). */
const MAX_REQUESTS = 10_000

/**
 * Which session each steering request (`per_…`, `que_…`) is of, for the routes
 * that name only the request (POST /permission/{requestID}/reply, the
 * question routes). Filled from the events this gateway maps (history and
 * live, settled requests too, so a late answer reaches the runner that can
 * say ALREADY_ANSWERED) and from the runners' `pending` answers. Bounded; in
 * memory, per gateway.
 */
export class RequestIndex {
  readonly #sessions = new Map<string, string>()
  readonly #max: number

  constructor(max = MAX_REQUESTS) {
    this.#max = max
  }

  remember(requestId: string, sessionId: string): void {
    this.#sessions.delete(requestId)
    this.#sessions.set(requestId, sessionId)
    if (this.#sessions.size > this.#max) this.#sessions.delete(this.#sessions.keys().next().value!)
  }

  sessionOf(requestId: string): string | undefined {
    return this.#sessions.get(requestId)
  }

  get size(): number {
    return this.#sessions.size
  }
}
