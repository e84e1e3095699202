/**
 * JSON-RPC 2.0 over newline-delimited JSON, both ways, as ACP speaks it on an
 * agent's stdio: the runner's requests and notifications out, the agent's
 * answers, notifications and requests (`session/request_permission`) in.
 * No I/O of its own: lines in through `receive`, lines out through `write`.
 *
 * Why not the client of `@agentclientprotocol/sdk` (2.4.0): it parses every
 * message of the agent with the protocol's zod schemas (an agent's own fields
 * and newer variants must pass through untouched: `_meta.quota`, unstable
 * updates), and its `connectWith(stream, workflow)` shape runs one workflow
 * per connection, while the runner's prompts, cancels and exits come from
 * outside at any time. This is the small part of it the engine needs.
 */

type Obj = Record<string, unknown>

/** An error answer of the agent. */
export class RpcError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.name = 'RpcError'
    this.code = code
    this.data = data
  }
}

export interface RpcHandlers {
  /** A notification of the agent. */
  onNotification(method: string, params: unknown): void
  /** A request of the agent; the answer is its result, a throw an error answer. */
  onRequest(method: string, params: unknown): Promise<unknown>
  /** A line that is not a JSON-RPC message. */
  onNoise(line: string): void
}

/** One JSON-RPC connection to one agent process. */
export class RpcPeer {
  readonly #write: (line: string) => void
  readonly #handlers: RpcHandlers
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>()
  #nextId = 1
  #closed: Error | undefined

  constructor(write: (line: string) => void, handlers: RpcHandlers) {
    this.#write = write
    this.#handlers = handlers
  }

  request(method: string, params: unknown): Promise<unknown> {
    if (this.#closed) return Promise.reject(this.#closed)
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      this.#send({ jsonrpc: '2.0', id, method, params })
    })
  }

  notify(method: string, params: unknown): void {
    if (!this.#closed) this.#send({ jsonrpc: '2.0', method, params })
  }

  /** The agent is gone: every request still waiting fails with `reason`. */
  close(reason: Error): void {
    if (this.#closed) return
    this.#closed = reason
    for (const pending of this.#pending.values()) pending.reject(reason)
    this.#pending.clear()
  }

  /** One line the agent wrote. */
  receive(line: string): void {
    if (line.trim() === '') return
    let msg: unknown
    try {
      msg = JSON.parse(line)
    } catch {
      return this.#handlers.onNoise(line)
    }
    if (!isObj(msg) || msg.jsonrpc !== '2.0') return this.#handlers.onNoise(line)
    if (typeof msg.method === 'string') {
      if (msg.id === undefined || msg.id === null) return this.#handlers.onNotification(msg.method, msg.params)
      return this.#answer(msg.id, msg.method, msg.params)
    }
    if (typeof msg.id !== 'number') return this.#handlers.onNoise(line)
    const pending = this.#pending.get(msg.id)
    if (!pending) return
    this.#pending.delete(msg.id)
    if (isObj(msg.error)) {
      const { code, message, data } = msg.error
      pending.reject(new RpcError(typeof code === 'number' ? code : -32603, typeof message === 'string' ? message : 'unknown error', data))
    } else pending.resolve(msg.result)
  }

  #answer(id: unknown, method: string, params: unknown): void {
    this.#handlers.onRequest(method, params).then(
      (result) => this.#send({ jsonrpc: '2.0', id, result: result ?? null }),
      (err: unknown) => {
        const error = err instanceof RpcError ? { code: err.code, message: err.message } : { code: -32603, message: (err as Error).message }
        this.#send({ jsonrpc: '2.0', id, error })
      },
    )
  }

  #send(message: Obj): void {
    if (!this.#closed) this.#write(`${JSON.stringify(message)}\n`)
  }
}

/** The error answer to a method the runner does not serve. */
export function methodNotFound(method: string): RpcError {
  return new RpcError(-32601, `Method not found: ${method}`)
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
