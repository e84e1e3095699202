/**
 * A plain SSE client for tests (fetch + a frame parser, no SDK): keeps every
 * frame as received, the raw text too, and waits for a matching one.
 */
export interface SseFrame {
  /** The frame's text without the blank line that ends it. */
  raw: string
  /** The JSON of its `data:` lines; undefined for comment-only frames. */
  data: any
}

export class SseClient {
  readonly response: Response
  readonly frames: SseFrame[] = []
  #buffer = ''
  #ended = false
  readonly #controller: AbortController
  #waiters = new Set<() => void>()

  private constructor(response: Response, controller: AbortController) {
    this.response = response
    this.#controller = controller
    void this.#read()
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const controller = new AbortController()
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal })
    return new SseClient(response, controller)
  }

  /** Opens the stream with a POST (the chat route). */
  static async post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<SseClient> {
    const controller = new AbortController()
    const response = await fetch(url, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: controller.signal,
    })
    return new SseClient(response, controller)
  }

  get ended(): boolean {
    return this.#ended
  }

  /** The data of every frame so far. */
  get data(): any[] {
    return this.frames.filter((frame) => frame.data !== undefined).map((frame) => frame.data)
  }

  /** The first frame data (seen or still to come) that matches. */
  next(match: (data: any) => boolean, timeoutMs = 15_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.data.find(match)
        if (found !== undefined) return finish(() => resolve(found))
        if (this.#ended) return finish(() => reject(new Error(`stream ended without a match; last: ${JSON.stringify(this.data.slice(-5))}`)))
      }
      const timer = setTimeout(() => finish(() => reject(new Error(`no matching frame in ${timeoutMs} ms; last: ${JSON.stringify(this.data.slice(-5))}`))), timeoutMs)
      const finish = (done: () => void) => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        done()
      }
      this.#waiters.add(check)
      check()
    })
  }

  /** Resolves when the server ends the stream. */
  async untilEnd(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.#ended) {
      if (Date.now() > deadline) throw new Error('stream did not end in time')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  close(): void {
    this.#controller.abort()
  }

  async #read(): Promise<void> {
    try {
      if (!this.response.body) return
      const decoder = new TextDecoder()
      for await (const chunk of this.response.body) {
        this.#buffer += decoder.decode(chunk as Uint8Array, { stream: true })
        let end: number
        while ((end = this.#buffer.indexOf('\n\n')) >= 0) {
          const raw = this.#buffer.slice(0, end)
          this.#buffer = this.#buffer.slice(end + 2)
          const dataLines = raw.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart())
          this.frames.push({ raw, data: dataLines.length > 0 ? JSON.parse(dataLines.join('\n')) : undefined })
        }
        for (const wake of this.#waiters) wake()
      }
    } catch {
      // aborted by close()
    } finally {
      this.#ended = true
      for (const wake of this.#waiters) wake()
    }
  }
}
