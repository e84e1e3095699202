/** What a client's connection can hold its writes on: the TCP socket under the WebSocket. */
export interface Corkable {
  cork(): void
  uncork(): void
}

/**
 * Coalesces the frames sent to one client in one pass of the event loop into
 * one write: the socket is corked at the first frame and uncorked once the
 * current callback and its microtasks are done (process.nextTick). A chunk of
 * CLI output carries hundreds of events; without this each one cost a writev
 * system call of its own, half the gateway's CPU while relaying. The delay is
 * that of the code already running, not a timer.
 */
export class WriteBatch {
  readonly #transport: Corkable
  #corked = false
  readonly #release = () => {
    this.#corked = false
    this.#transport.uncork()
  }

  constructor(transport: Corkable) {
    this.#transport = transport
  }

  /** Call before each frame is sent. */
  hold(): void {
    if (this.#corked) return
    this.#corked = true
    this.#transport.cork()
    process.nextTick(this.#release)
  }
}
