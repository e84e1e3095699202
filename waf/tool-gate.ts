/**
 * The tool gate: the port an engine asks before the CLI runs a tool. The WAF
 * implements it (guard.ts); engines only call it.
 */
/** A tool call the CLI asks about before it runs it. */
export interface ToolCall {
  toolName: string
  input: unknown
  toolUseId?: string
  /** The CLI's working directory (globs in a command expand from there). */
  cwd?: string
}

/** Whether a tool call may run; a deny's reason is what the agent reads. */
export type ToolDecision = { decision: 'allow' } | { decision: 'deny'; reason: string }

/**
 * Asked before each tool call, in the runner's process. Anything but an allow
 * (a deny, a throw, a rejected promise, no answer within `timeoutSeconds`)
 * keeps the tool from running.
 */
export interface ToolGate {
  check(call: ToolCall): ToolDecision | Promise<ToolDecision>
  /** How long the CLI waits for an answer before it denies the call. */
  timeoutSeconds: number
}
