/**
 * The two small contracts of the WAF's tool hook, kept free of dependencies
 * because the hook script loads this module on every tool call:
 *
 * - Claude Code ⇄ hook (verified against the real CLI 2.1.330): the CLI runs
 *   the hook command with `/bin/sh -c` and writes one JSON object on its stdin
 *   (`hook_event_name: "PreToolUse"`, `tool_name`, `tool_input`, `tool_use_id`,
 *   `session_id`, `cwd`, `transcript_path`, `permission_mode`, …). The hook
 *   denies by printing `hookSpecificOutput.permissionDecision: "deny"` with a
 *   reason and exiting 0: the agent gets a failed tool_result that reads
 *   `PreToolUse:<tool> hook error: <reason>`, and the tool does not run. Exit 0
 *   with no output means "no objection" (the CLI's own permission rules apply).
 * - hook ⇄ runner: one JSON line each way over the runner's unix socket.
 */

/** The variable that gives the hook the runner's socket. */
export const WAF_SOCKET_VAR = 'AGENT_RUNTIME_WAF_SOCKET'

/** The hook denies on its own when the runner has not answered within this time. */
export const HOOK_ANSWER_TIMEOUT_MS = 10_000
/** Overrides HOOK_ANSWER_TIMEOUT_MS (milliseconds) for the hook; set in the CLI's environment, so the agent cannot change it for the CLI. */
export const HOOK_TIMEOUT_VAR = 'AGENT_RUNTIME_WAF_HOOK_TIMEOUT_MS'

/**
 * The CLI's own time limit for the hook (seconds), above HOOK_ANSWER_TIMEOUT_MS.
 * With `onFailure: "block"` a hook that times out or crashes denies the call;
 * without it the CLI would run the tool (seen with 2.1.330).
 */
export const HOOK_CLI_TIMEOUT_S = 30

/** Tool-call input the hook forwards at most (bytes of the CLI's JSON); larger calls are denied. */
export const HOOK_MAX_INPUT_BYTES = 32 * 1024 * 1024

/** What the hook asks the runner, one JSON line. */
export interface HookRequest {
  /** The session tag of the CLI process (AGENT_RUNTIME_SESSION_TAG), naming the session on this runner. */
  tag: string
  tool_name: string
  tool_input: unknown
  tool_use_id?: string
  /** The CLI's conversation id and working directory, for logs. */
  session_id?: string
  cwd?: string
}

/** The runner's answer, one JSON line. */
export type HookReply = { decision: 'allow' } | { decision: 'deny'; reason: string }

/** The PreToolUse fields of the CLI's hook input the runner needs; undefined when it is not a PreToolUse call. */
export function toolCallOf(input: unknown): Omit<HookRequest, 'tag'> | undefined {
  if (typeof input !== 'object' || input === null) return undefined
  const fields = input as Record<string, unknown>
  if (typeof fields.tool_name !== 'string') return undefined
  const call: Omit<HookRequest, 'tag'> = { tool_name: fields.tool_name, tool_input: fields.tool_input ?? {} }
  if (typeof fields.tool_use_id === 'string') call.tool_use_id = fields.tool_use_id
  if (typeof fields.session_id === 'string') call.session_id = fields.session_id
  if (typeof fields.cwd === 'string') call.cwd = fields.cwd
  return call
}

/** The hook's stdout that makes Claude Code deny the tool call and show `reason` to the agent. */
export function denyOutput(reason: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }) + '\n'
}

/** The runner's reply line, or undefined when the line is not one. */
export function parseReply(line: string): HookReply | undefined {
  let reply: unknown
  try {
    reply = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof reply !== 'object' || reply === null) return undefined
  const { decision, reason } = reply as { decision?: unknown; reason?: unknown }
  if (decision === 'allow') return { decision }
  if (decision === 'deny' && typeof reason === 'string') return { decision, reason }
  return undefined
}
