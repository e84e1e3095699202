import type { Duplex } from 'node:stream'
import type { ToolCall, ToolDecision, ToolGate } from '../../../waf/mod.ts'
import type { Approver } from '../approver.ts'
import { LineSplitter } from '../line-splitter.ts'
import { asksPerson } from './asks.ts'
import { wafToolCall } from './tool-call.ts'

/**
 * The runner's end of the tool gate of one OpenCode process: a socket passed
 * to the CLI as a file descriptor, read by gate-plugin.mjs inside it. One JSON
 * object a line. Plugin → runner: `{type:"ready"}` once the plugin is loaded,
 * `{type:"check", id, tool, callID, args}` before each tool call. Runner →
 * plugin: `{id, allow:true}` or `{id, allow:false, reason}`. A call the gate
 * allowed may first wait for a person (an approver, asks.ts says which): the
 * plugin holds it as long as that takes, and a deny's message is the reason.
 */

/** A line the plugin wrote, understood. */
export type GateMessage =
  | { kind: 'ready' }
  | { kind: 'check'; id: number; tool: string; callId: string | undefined; args: unknown }
  | { kind: 'invalid'; line: string }

export function parseGateLine(line: string): GateMessage {
  let message: unknown
  try {
    message = JSON.parse(line)
  } catch {
    return { kind: 'invalid', line }
  }
  if (typeof message !== 'object' || message === null) return { kind: 'invalid', line }
  const m = message as Record<string, unknown>
  if (m.type === 'ready') return { kind: 'ready' }
  if (m.type === 'check' && typeof m.id === 'number' && typeof m.tool === 'string') {
    return { kind: 'check', id: m.id, tool: m.tool, callId: typeof m.callID === 'string' ? m.callID : undefined, args: m.args }
  }
  return { kind: 'invalid', line }
}

export function answerLine(id: number, decision: ToolDecision): string {
  const answer = decision.decision === 'allow' ? { id, allow: true } : { id, allow: false, reason: decision.reason }
  return `${JSON.stringify(answer)}\n`
}

/** A deny for a call the gate could not decide: the agent reads why. */
function unchecked(why: string): ToolDecision {
  return { decision: 'deny', reason: `Tool call blocked: the runtime could not check it (${why}).` }
}

/** A tool call the plugin announced, before it runs (and before the gate decided). */
export interface AnnouncedCall {
  callId: string | undefined
  tool: string
  args: unknown
}

export interface GateChannelOptions {
  /** Decides each call; none: every call may run (the CLI's own rules only). */
  gate?: ToolGate | undefined
  /** Asks a person about the calls the gate allowed (engine.approval: ask); none: they run. */
  approver?: Approver | undefined
  socket: Duplex
  /** The CLI's working directory, where a call's relative paths and globs start. */
  cwd: string
  onCall(call: AnnouncedCall): void
}

/**
 * Answers the plugin's checks with the gate's decisions, fail-closed: a
 * throw, a rejection or no decision within the gate's timeout is a deny.
 * Then, with an approver, a person decides the calls asks.ts names (no time
 * limit here: the approver has its own); a channel that closes (the CLI
 * exited, the turn was stopped) withdraws those asks.
 * `ready` resolves once the plugin said it is loaded (the prompt waits for it).
 */
export class GateChannel {
  readonly ready: Promise<void>
  readonly #gate: ToolGate | undefined
  readonly #approver: Approver | undefined
  /** Aborted when the channel closes: the asks still waiting are withdrawn. */
  readonly #closed = new AbortController()
  readonly #socket: Duplex
  readonly #cwd: string
  readonly #onCall: (call: AnnouncedCall) => void
  readonly #lines = new LineSplitter({ maxLineBytes: 16 * 1024 * 1024 })
  readonly #onReady: () => void

  constructor({ gate, approver, socket, cwd, onCall }: GateChannelOptions) {
    this.#gate = gate
    this.#approver = approver
    this.#socket = socket
    this.#cwd = cwd
    this.#onCall = onCall
    const { promise, resolve } = Promise.withResolvers<void>()
    this.ready = promise
    this.#onReady = resolve
    // The CLI's end goes with the CLI; a late write must not crash the runner.
    socket.on('error', () => {})
    socket.once('close', () => this.#closed.abort())
    socket.on('data', (chunk: Buffer) => {
      for (const line of this.#lines.push(chunk)) this.#handle(parseGateLine(line))
    })
  }

  #handle(message: GateMessage): void {
    if (message.kind === 'ready') return this.#onReady()
    if (message.kind === 'invalid') return
    this.#onCall({ callId: message.callId, tool: message.tool, args: message.args })
    const gate = this.#gate
    const call = wafToolCall(message.tool, message.args, message.callId, this.#cwd)
    const checked = gate ? this.#decide(gate, () => gate.check(call)) : Promise.resolve<ToolDecision>({ decision: 'allow' })
    const approver = this.#approver
    const decided =
      approver && asksPerson(message.tool) ? checked.then((decision) => (decision.decision === 'allow' ? this.#askPerson(approver, call) : decision)) : checked
    void decided.then((decision) => {
      if (this.#socket.writable) this.#socket.write(answerLine(message.id, decision))
    })
  }

  /** A person's answer as the plugin's decision; the call runs with the input OpenCode gave (the approver's is the WAF's view of it). */
  async #askPerson(approver: Approver, call: ToolCall): Promise<ToolDecision> {
    try {
      const answer = await approver.permission({ call }, this.#closed.signal)
      return answer.behavior === 'allow' ? { decision: 'allow' } : { decision: 'deny', reason: answer.message }
    } catch (err) {
      return unchecked(`asking a person failed: ${(err as Error).message}`)
    }
  }

  async #decide(gate: ToolGate, check: () => ToolDecision | Promise<ToolDecision>): Promise<ToolDecision> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<ToolDecision>((resolve) => {
      timer = setTimeout(() => resolve(unchecked(`no decision within ${gate.timeoutSeconds} s`)), gate.timeoutSeconds * 1000)
    })
    try {
      return await Promise.race([Promise.resolve().then(check), timeout])
    } catch (err) {
      return unchecked(`the check failed: ${(err as Error).message}`)
    } finally {
      clearTimeout(timer)
    }
  }
}
