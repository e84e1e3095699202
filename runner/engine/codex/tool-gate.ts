import { rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import type { ToolCall, ToolDecision, ToolGate } from '../../../waf/mod.ts'
import { hookToolCall } from './map.ts'

/** The hook program Codex runs before every tool call (runner/engine/codex/gate-client.mjs). */
export const GATE_CLIENT = new URL('./gate-client.mjs', import.meta.url).pathname

/** Longest request a hook may send (a tool call's input; a big file write stays far below). */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024

/**
 * The runner's side of Codex's PreToolUse hook: a Unix socket where each
 * connection is one tool call (the hook's stdin, as Codex wrote it), answered
 * with the gate's decision. Fail-closed: a throw, a rejection, a request that
 * cannot be read, or a call the runner does not understand is a deny.
 */
export class CodexToolGate {
  readonly #server: Server
  readonly socketPath: string

  private constructor(server: Server, socketPath: string) {
    this.#server = server
    this.socketPath = socketPath
  }

  static async listen(socketPath: string, gate: ToolGate): Promise<CodexToolGate> {
    await rm(socketPath, { force: true })
    // Half-open: the hook ends its side after the request and reads the answer after that.
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      const chunks: Buffer[] = []
      let size = 0
      socket.on('error', () => socket.destroy())
      socket.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_REQUEST_BYTES) socket.end(JSON.stringify(deny('the tool call is too large to check')))
        else chunks.push(chunk)
      })
      socket.on('end', () => {
        if (size > MAX_REQUEST_BYTES) return
        void decide(gate, Buffer.concat(chunks).toString('utf8')).then(({ decision }) => {
          if (!socket.destroyed) socket.end(JSON.stringify(decision))
        })
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socketPath, () => resolve())
    })
    return new CodexToolGate(server, socketPath)
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
    await rm(this.socketPath, { force: true })
  }
}

function deny(why: string): ToolDecision {
  return { decision: 'deny', reason: `The runtime did not run this tool call: ${why}.` }
}

/** The gate's decision about one hook request; anything but a clear allow is a deny. */
export async function decide(gate: ToolGate, request: string): Promise<{ call?: ToolCall; decision: ToolDecision }> {
  let parsed: unknown
  try {
    parsed = JSON.parse(request)
  } catch {
    return { decision: deny('the hook sent no readable tool call') }
  }
  const call = hookToolCall(parsed)
  if (!call) return { decision: deny('the hook named no tool call the runtime knows') }
  try {
    const decision = await withTimeout(Promise.resolve(gate.check(call)), gate.timeoutSeconds * 1000)
    return { call, decision: decision.decision === 'allow' ? { decision: 'allow' } : decision }
  } catch (err) {
    return { call, decision: deny(`the check failed (${(err as Error).message})`) }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
