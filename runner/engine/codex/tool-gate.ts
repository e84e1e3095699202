import { rm } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import type { ToolCall, ToolDecision, ToolGate } from '../../../waf/mod.ts'
import type { Approver } from '../approver.ts'
import { hookToolCall } from './map.ts'

/** The hook program Codex runs before every tool call (runner/engine/codex/gate-client.mjs). */
export const GATE_CLIENT = new URL('./gate-client.mjs', import.meta.url).pathname

/** Longest request a hook may send (a tool call's input; a big file write stays far below). */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024

/** What the hook asks: the tool gate (the WAF) first, then, with engine.approval: ask, a person. At least one. */
export interface HookDeciders {
  gate?: ToolGate | undefined
  approver?: Approver | undefined
}

/**
 * The runner's side of Codex's PreToolUse hook: a Unix socket where each
 * connection is one tool call (the hook's stdin, as Codex wrote it), answered
 * with the gate's decision and then the person's. Fail-closed: a throw, a
 * rejection, a request that cannot be read, or a call the runner does not
 * understand is a deny. Closing the gate (the CLI exited) withdraws the asks
 * still waiting for a person and drops their connections.
 */
export class CodexToolGate {
  readonly #server: Server
  readonly #open: Set<{ socket: Socket; withdrawn: AbortController }>
  readonly socketPath: string

  private constructor(server: Server, open: Set<{ socket: Socket; withdrawn: AbortController }>, socketPath: string) {
    this.#server = server
    this.#open = open
    this.socketPath = socketPath
  }

  static async listen(socketPath: string, deciders: HookDeciders): Promise<CodexToolGate> {
    await rm(socketPath, { force: true })
    const open = new Set<{ socket: Socket; withdrawn: AbortController }>()
    // Half-open: the hook ends its side after the request and reads the answer after that.
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      const chunks: Buffer[] = []
      let size = 0
      const connection = { socket, withdrawn: new AbortController() }
      open.add(connection)
      socket.on('close', () => open.delete(connection))
      socket.on('error', () => socket.destroy())
      socket.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_REQUEST_BYTES) socket.end(JSON.stringify(deny('the tool call is too large to check')))
        else chunks.push(chunk)
      })
      socket.on('end', () => {
        if (size > MAX_REQUEST_BYTES) return
        void decide(deciders, Buffer.concat(chunks).toString('utf8'), connection.withdrawn.signal).then(({ decision }) => {
          if (!socket.destroyed) socket.end(JSON.stringify(decision))
        })
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socketPath, () => resolve())
    })
    return new CodexToolGate(server, open, socketPath)
  }

  async close(): Promise<void> {
    for (const { socket, withdrawn } of this.#open) {
      withdrawn.abort()
      socket.destroy()
    }
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
    await rm(this.socketPath, { force: true })
  }
}

function deny(why: string): ToolDecision {
  return { decision: 'deny', reason: `The runtime did not run this tool call: ${why}.` }
}

/**
 * The decision about one hook request: the gate's, and a person's about what
 * it allowed (a WAF deny is never asked); anything but a clear allow is a
 * deny, and a person's deny carries their message to the model.
 */
export async function decide(deciders: HookDeciders, request: string, signal?: AbortSignal): Promise<{ call?: ToolCall; decision: ToolDecision }> {
  let parsed: unknown
  try {
    parsed = JSON.parse(request)
  } catch {
    return { decision: deny('the hook sent no readable tool call') }
  }
  const call = hookToolCall(parsed)
  if (!call) return { decision: deny('the hook named no tool call the runtime knows') }
  const { gate, approver } = deciders
  if (gate) {
    try {
      const decision = await withTimeout(Promise.resolve(gate.check(call)), gate.timeoutSeconds * 1000)
      if (decision.decision !== 'allow') return { call, decision }
    } catch (err) {
      return { call, decision: deny(`the check failed (${(err as Error).message})`) }
    }
  }
  if (!approver) return { call, decision: { decision: 'allow' } }
  try {
    const answer = await approver.permission({ call }, signal)
    return { call, decision: answer.behavior === 'allow' ? { decision: 'allow' } : { decision: 'deny', reason: answer.message } }
  } catch (err) {
    return { call, decision: deny(`the request could not be put to a person (${(err as Error).message})`) }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
