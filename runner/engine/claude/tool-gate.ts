import type { ToolDecision, ToolGate } from '../../../waf/mod.ts'
import { hookAnswerLine, initializeLine, parseControl, uncheckedDecision, unsupportedAnswerLine, type Obj } from './control.ts'

/**
 * One CLI process's tool gate over the control protocol (control.ts): sends
 * the initialize request at once, answers each `hook_callback` the CLI writes
 * with the gate's decision, and holds prompts until the CLI has taken the
 * hook, so no turn runs in a CLI that would run tools unchecked. A CLI that
 * refuses the initialize request is stopped.
 */
export class ToolGateSession {
  readonly #gate: ToolGate
  readonly #write: (line: string) => void
  readonly #refused: (why: string) => void
  /** Prompts written before the CLI answered the initialize request. */
  #held: string[] | undefined = []

  constructor(gate: ToolGate, write: (line: string) => void, refused: (why: string) => void) {
    this.#gate = gate
    this.#write = write
    this.#refused = refused
    write(initializeLine(gate.timeoutSeconds))
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

  #decide(requestId: string, call: Parameters<ToolGate['check']>[0]): void {
    const answer = (decision: ToolDecision | undefined) => this.#write(hookAnswerLine(requestId, decision))
    let decision: ToolDecision | Promise<ToolDecision>
    try {
      decision = this.#gate.check(call)
    } catch (err) {
      return answer(uncheckedDecision(`the check failed (${(err as Error).message})`))
    }
    // The WAF decides synchronously: answered on the same tick as the request was read.
    if (!(decision instanceof Promise)) return answer(decision)
    decision.then(answer, (err: unknown) => answer(uncheckedDecision(`the check failed (${(err as Error).message})`)))
  }
}
