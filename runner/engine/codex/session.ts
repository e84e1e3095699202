import type { EngineHandlers, EngineStartOptions } from '../engine.ts'
import { startInstructions } from '../prompt.ts'
import type { ToolDecision } from '../../../waf/mod.ts'
import { CodexTurnMapper, SHELL_TOOL, threadInit, unwrapShell } from './map.ts'

type Message = { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { message?: string } }
type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * One app-server process's conversation: `initialize`, then `thread/start` (or
 * `thread/resume` of the id an earlier process reported), then a `turn/start`
 * per prompt (prompts sent before the thread exists wait for it). Every turn
 * ends with exactly one result: the CLI's `turn/completed`, or a failed result
 * when the turn could not start or the process exited mid-turn.
 */
export class AppServerSession {
  readonly #options: EngineStartOptions
  readonly #handlers: EngineHandlers
  readonly #write: (message: Message) => void
  #nextId = 0
  readonly #pending = new Map<number, (message: Message) => void>()
  #threadId: string | undefined
  /** Why the conversation cannot go on (the thread could not be started or resumed). */
  #broken: { why: string; conversationNotFound: boolean } | undefined
  #queued: string[] = []
  #turn: { mapper: CodexTurnMapper; id?: string; interrupt?: true } | undefined
  #model: string | undefined

  constructor(options: EngineStartOptions, handlers: EngineHandlers, write: (message: Message) => void) {
    this.#options = options
    this.#handlers = handlers
    this.#write = write
  }

  begin(): void {
    this.#request('initialize', { clientInfo: { name: 'agent-runtime', title: null, version: '1' }, capabilities: null }, (reply) => {
      if (reply.error) return this.#break(`initialize failed: ${reply.error.message ?? 'no reason given'}`, false)
      this.#write({ method: 'initialized' })
      // Hooks from config (the runner's tool gate) run only when trusted; the runner wrote them itself.
      const instructions = startInstructions(this.#options)
      const common = { cwd: this.#options.cwd, config: { bypass_hook_trust: true }, ...(instructions && { developerInstructions: instructions }) }
      const resume = this.#options.resume && this.#options.conversationId !== undefined
      const [method, params] = resume ? ['thread/resume', { ...common, threadId: this.#options.conversationId }] : ['thread/start', common]
      this.#request(method, params, (started) => {
        const init = started.error ? undefined : threadInit(started.result)
        if (!init) return this.#break(`${method} failed: ${started.error?.message ?? 'no thread in the answer'}`, resume)
        this.#threadId = init.cliSessionId
        this.#model = init.model
        this.#handlers.onOutput(init)
        const queued = this.#queued
        this.#queued = []
        for (const prompt of queued) this.send(prompt)
      })
    })
  }

  send(prompt: string): void {
    if (this.#broken) return this.#handlers.onOutput(this.#failedResult(new CodexTurnMapper(), this.#broken.why, this.#broken.conversationNotFound))
    if (this.#threadId === undefined || this.#turn) {
      this.#queued.push(prompt)
      return
    }
    const turn: { mapper: CodexTurnMapper; id?: string; interrupt?: true } = { mapper: new CodexTurnMapper(this.#model) }
    this.#turn = turn
    this.#request('turn/start', { threadId: this.#threadId, input: [{ type: 'text', text: prompt, text_elements: [] }] }, (reply) => {
      if (reply.error) return this.#endTurn(this.#failedResult(turn.mapper, `turn/start failed: ${reply.error.message ?? 'no reason given'}`))
      const id = isObject(reply.result) && isObject(reply.result.turn) ? reply.result.turn.id : undefined
      if (typeof id === 'string') this.#turnKnown(turn, id)
    })
  }

  interrupt(): void {
    const turn = this.#turn
    if (!turn) return
    if (turn.id === undefined) turn.interrupt = true
    else this.#request('turn/interrupt', { threadId: this.#threadId, turnId: turn.id }, () => {})
  }

  /** A stdout line of the app-server. */
  receive(line: string): void {
    let message: Message
    try {
      message = JSON.parse(line)
    } catch {
      return this.#handlers.onOutput({ kind: 'noise', line })
    }
    if (!isObject(message)) return this.#handlers.onOutput({ kind: 'noise', line })
    if (message.method === undefined && typeof message.id === 'number') {
      const resolve = this.#pending.get(message.id)
      this.#pending.delete(message.id)
      return resolve?.(message)
    }
    if (typeof message.method !== 'string') return this.#handlers.onOutput({ kind: 'noise', line })
    if (message.id !== undefined) return this.#answerRequest(message.id, message.method, message.params)
    this.#notification(message.method, message.params)
  }

  /**
   * The process is gone. A running turn gets no result from here: the runner
   * sees the exit and decides (a turn the process never answered runs again in
   * a new one, resumed; one it had begun ends ENGINE_EXITED).
   */
  exited(): void {
    this.#turn = undefined
    this.#queued.length = 0
  }

  #notification(method: string, params: unknown): void {
    const turn = this.#turn
    if (!turn) return
    if (method === 'turn/started' && isObject(params) && isObject(params.turn) && typeof params.turn.id === 'string') this.#turnKnown(turn, params.turn.id)
    for (const output of turn.mapper.map(method, params)) {
      if (output.kind === 'result') this.#endTurn(output)
      else this.#handlers.onOutput(output)
    }
  }

  #turnKnown(turn: { id?: string; interrupt?: true }, id: string): void {
    if (turn.id !== undefined) return
    turn.id = id
    if (turn.interrupt) this.interrupt()
  }

  #endTurn(result: ReturnType<CodexTurnMapper['failed']>): void {
    if (!this.#turn) return
    this.#turn = undefined
    this.#handlers.onOutput(result)
    const next = this.#queued.shift()
    if (next !== undefined) this.send(next)
  }

  #failedResult(mapper: CodexTurnMapper, why: string, conversationNotFound = false) {
    const output = mapper.failed(why)
    if (output.kind === 'result' && conversationNotFound) output.result.conversationNotFound = true
    return output
  }

  #break(why: string, conversationNotFound: boolean): void {
    this.#broken = { why, conversationNotFound }
    this.#handlers.onStderr(`agent-runtime: ${why}`)
    const queued = this.#queued
    this.#queued = []
    for (const _ of queued) this.#handlers.onOutput(this.#failedResult(new CodexTurnMapper(), why, conversationNotFound))
  }

  /** Requests the app-server makes of its client: approvals go through the tool gate, anything else is refused. */
  #answerRequest(id: number | string, method: string, params: unknown): void {
    const p = isObject(params) ? params : {}
    if (method === 'item/commandExecution/requestApproval' || method === 'item/fileChange/requestApproval') {
      const command = typeof p.command === 'string' ? unwrapShell(p.command) : undefined
      const call =
        method === 'item/commandExecution/requestApproval'
          ? { toolName: SHELL_TOOL, input: { command: command ?? '' } }
          : { toolName: 'apply_patch', input: { reason: p.reason ?? null } }
      void this.#decide({
        ...call,
        ...(typeof p.itemId === 'string' && { toolUseId: p.itemId }),
        cwd: typeof p.cwd === 'string' ? p.cwd : this.#options.cwd,
      }).then((decision) => this.#write({ id, result: { decision: decision.decision === 'allow' ? 'accept' : 'decline' } }))
      return
    }
    this.#write({ id, error: { code: -32601, message: `agent-runtime does not serve ${method}` } } as Message)
  }

  /** The gate's decision, fail-closed; no gate: Codex's own asking is answered yes (the runner's sandbox is around it). */
  async #decide(call: { toolName: string; input: unknown; toolUseId?: string; cwd?: string }): Promise<ToolDecision> {
    const gate = this.#options.toolGate
    if (!gate) return { decision: 'allow' }
    try {
      return await gate.check(call)
    } catch (err) {
      return { decision: 'deny', reason: `the check failed (${(err as Error).message})` }
    }
  }

  #request(method: string, params: unknown, onReply: (message: Message) => void): void {
    const id = ++this.#nextId
    this.#pending.set(id, onReply)
    this.#write({ method, id, params })
  }
}
