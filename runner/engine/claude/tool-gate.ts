import type { ToolCall, ToolDecision, ToolGate } from '../../../waf/mod.ts'
import type { Approver } from '../approver.ts'
import {
  hookAnswerLine,
  initializeLine,
  parseControl,
  permissionAnswerLine,
  questionAnswerLine,
  uncheckedDecision,
  unsupportedAnswerLine,
  type Obj,
} from './control.ts'

/**
 * One CLI process's side of the control protocol (control.ts). With a tool
 * gate (the WAF): sends the initialize request at once, answers each
 * `hook_callback` with the gate's decision, and holds prompts until the CLI
 * has taken the hook, so no turn runs in a CLI that would run tools unchecked;
 * a CLI that refuses the initialize request is stopped. With an approver
 * (engine.approval: ask): each `can_use_tool` request goes to a person
 * through it, and a request the CLI withdraws is withdrawn there too.
 */
export class ToolGateSession {
  readonly #gate: ToolGate | undefined
  readonly #approver: Approver | undefined
  readonly #write: (line: string) => void
  readonly #refused: (why: string) => void
  /** Prompts written before the CLI answered the initialize request. */
  #held: string[] | undefined
  /** Permission requests and questions waiting for a person, by the CLI's request id. */
  readonly #waiting = new Map<string, AbortController>()

  constructor(parts: { gate?: ToolGate | undefined; approver?: Approver | undefined }, write: (line: string) => void, refused: (why: string) => void) {
    this.#gate = parts.gate
    this.#approver = parts.approver
    this.#write = write
    this.#refused = refused
    if (parts.gate) {
      this.#held = []
      write(initializeLine(parts.gate.timeoutSeconds))
    }
  }

  /** Writes a prompt now, or once the CLI took the hook. */
  afterInitialize(line: string): void {
    if (this.#held) this.#held.push(line)
    else this.#write(line)
  }

  /** Handles one control message the CLI wrote (parse.ts hands over every line of a control type). */
  handle(control: Obj): void {
    const message = parseControl(control)
    if (!message) return
    switch (message.kind) {
      case 'hook_callback':
        if (message.call) this.#decide(message.requestId, message.call)
        else this.#write(hookAnswerLine(message.requestId, uncheckedDecision('the CLI asked about no tool call the runner knows')))
        break
      case 'can_use_tool': {
        const approver = this.#approver
        if (!approver) return this.#write(unsupportedAnswerLine(message.requestId, 'can_use_tool'))
        const ask = { call: message.call, ...(message.suggestion && { suggestion: message.suggestion }) }
        this.#ask(
          message.requestId,
          (signal) => approver.permission(ask, signal),
          (answer) => permissionAnswerLine(message.requestId, answer),
        )
        break
      }
      case 'ask_user_question': {
        const approver = this.#approver
        if (!approver) return this.#write(unsupportedAnswerLine(message.requestId, 'can_use_tool'))
        const ask = { questions: message.questions, ...(message.toolUseId !== undefined && { toolUseId: message.toolUseId }) }
        this.#ask(
          message.requestId,
          (signal) => approver.question(ask, signal),
          (answer) => questionAnswerLine(message.requestId, message.input, message.questions, answer),
        )
        break
      }
      case 'cancel':
        this.#waiting.get(message.requestId)?.abort()
        break
      case 'unsupported_request':
        this.#write(unsupportedAnswerLine(message.requestId, message.subtype))
        break
      case 'initialized': {
        const held = this.#held
        if (!held) break
        this.#held = undefined
        if (message.ok) for (const prompt of held) this.#write(prompt)
        else this.#refused(`the CLI refused the runner's tool hook (${message.error ?? 'no reason given'}); stopped before any prompt`)
        break
      }
      case 'other':
        break
    }
  }

  /** Withdraws every request still waiting for a person (the CLI exited). */
  close(): void {
    for (const waiting of this.#waiting.values()) waiting.abort()
  }

  /** Asks a person; answers the CLI unless it withdrew the request meanwhile (it no longer reads an answer). */
  #ask<A>(requestId: string, asking: (signal: AbortSignal) => Promise<A>, line: (answer: A) => string): void {
    const withdrawn = new AbortController()
    this.#waiting.set(requestId, withdrawn)
    asking(withdrawn.signal).then(
      (answer) => {
        this.#waiting.delete(requestId)
        if (!withdrawn.signal.aborted) this.#write(line(answer))
      },
      (err: unknown) => {
        this.#waiting.delete(requestId)
        if (!withdrawn.signal.aborted)
          this.#write(permissionAnswerLine(requestId, { behavior: 'deny', message: `The request could not be put to a person: ${(err as Error).message}` }))
      },
    )
  }

  #decide(requestId: string, call: ToolCall): void {
    const gate = this.#gate
    const answer = (decision: ToolDecision | undefined) => this.#write(hookAnswerLine(requestId, decision))
    if (!gate) return answer({ decision: 'allow' })
    let decision: ToolDecision | Promise<ToolDecision>
    try {
      decision = gate.check(call)
    } catch (err) {
      return answer(uncheckedDecision(`the check failed (${(err as Error).message})`))
    }
    // The WAF decides synchronously: answered on the same tick as the request was read.
    if (!(decision instanceof Promise)) return answer(decision)
    decision.then(answer, (err: unknown) => answer(uncheckedDecision(`the check failed (${(err as Error).message})`)))
  }
}
