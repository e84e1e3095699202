/**
 * Claude Code's stream-json control protocol, as far as the runner speaks it:
 * in-process PreToolUse hooks. Pure: lines in, lines and decisions out.
 * Shapes recorded from the real CLI 2.1.330
 * (test/fakes/recordings/claude-2.1.330-hook-callbacks.json):
 *
 * - stdin `control_request` `initialize` with
 *   `hooks: {PreToolUse: [{matcher, hookCallbackIds, timeout, onFailure}]}`;
 *   the CLI answers `control_response` success (`hooks_applied: true`) before
 *   it reads the next line;
 * - before each matching tool call the CLI writes `control_request`
 *   `hook_callback` {callback_id, input: the PreToolUse hook input, tool_use_id}
 *   on stdout and waits for `control_response` {request_id, response} on stdin;
 * - `response: {}` is no objection (the CLI's own permission rules apply);
 *   `hookSpecificOutput.permissionDecision: "deny"` with a reason denies: the
 *   agent's tool_result reads `PreToolUse:<tool> hook error: <reason>`;
 * - no answer within `timeout` seconds: the CLI writes `control_cancel_request`
 *   and denies. An error answer or one it cannot parse denies only with
 *   `onFailure: "block"` (without it the tool runs), so the runner always sets it.
 *
 * Permission prompts (engine.approval: ask; the CLI runs with
 * `--permission-prompt-tool stdio`), recorded in
 * test/fakes/recordings/claude-2.1.330-permission-prompts.json:
 *
 * - after the hook allowed a call that the CLI's permission mode would ask a
 *   person about, the CLI writes `control_request` `can_use_tool`
 *   {tool_name, input, tool_use_id, permission_suggestions, description, …};
 * - `{behavior: "allow", updatedInput}` runs the tool with `updatedInput`;
 *   `{behavior: "deny", message}` does not, and the agent reads `message`;
 * - `AskUserQuestion` comes the same way (`requires_user_interaction`): the
 *   answers go back in `updatedInput.answers`, keyed by question text; a deny
 *   is a rejected question;
 * - an interrupt while the request waits: the CLI writes
 *   `control_cancel_request` with its id and treats the call as rejected.
 */
import type { QuestionItem } from '../../../contract/mod.ts'
import type { ToolCall, ToolDecision } from '../../../waf/mod.ts'
import type { PermissionAnswer, QuestionAnswer } from '../approver.ts'

/** The id the runner gives its one PreToolUse callback. */
export const PRE_TOOL_USE_CALLBACK_ID = 'agent_runtime_waf'
/** The request id of the runner's initialize request. */
export const INITIALIZE_REQUEST_ID = 'agent_runtime_init'

export type Obj = Record<string, unknown>

/** The initialize request that registers the runner's PreToolUse callback for every tool. */
export function initializeLine(timeoutSeconds: number): string {
  const hook = { matcher: '*', hookCallbackIds: [PRE_TOOL_USE_CALLBACK_ID], timeout: timeoutSeconds, onFailure: 'block' }
  return (
    JSON.stringify({ type: 'control_request', request_id: INITIALIZE_REQUEST_ID, request: { subtype: 'initialize', hooks: { PreToolUse: [hook] } } }) + '\n'
  )
}

/** A control message the CLI wrote on stdout. */
export type ControlMessage =
  /** A tool call to decide; `call` undefined when the request names no tool (it is denied). */
  | { kind: 'hook_callback'; requestId: string; call: ToolCall | undefined }
  /** A tool call the CLI's permission mode would ask a person about; `suggestion` is its first addRules rule. */
  | { kind: 'can_use_tool'; requestId: string; call: ToolCall; suggestion?: { toolName: string; ruleContent?: string } }
  /** Claude Code's AskUserQuestion tool: questions for the person; `input` goes back with the answers. */
  | { kind: 'ask_user_question'; requestId: string; toolUseId?: string; questions: QuestionItem[]; input: Obj }
  /** The CLI withdrew one of its requests (an interrupt while it waited). */
  | { kind: 'cancel'; requestId: string }
  /** Another request of the CLI; answered with an error, as the SDK does for what it does not serve. */
  | { kind: 'unsupported_request'; requestId: string; subtype: string }
  /** The answer to the runner's initialize request. */
  | { kind: 'initialized'; ok: boolean; error?: string }
  /** Anything else of the protocol (answers to interrupts, cancel requests): nothing to do. */
  | { kind: 'other' }

/** Whether a stream-json message `type` belongs to the control protocol (never an event of the conversation). */
export function isControlType(type: string): boolean {
  return type.startsWith('control_')
}

/** The control message of a parsed stdout line of a control type; undefined when it is not one the runner knows. */
export function parseControl(value: Obj): ControlMessage | undefined {
  if (value.type === 'control_response') return parseResponse(value.response)
  if (value.type === 'control_cancel_request') return typeof value.request_id === 'string' ? { kind: 'cancel', requestId: value.request_id } : { kind: 'other' }
  if (value.type !== 'control_request' || typeof value.request_id !== 'string' || !isObj(value.request)) return undefined
  const request = value.request
  if (request.subtype === 'can_use_tool') return canUseTool(value.request_id, request)
  if (request.subtype !== 'hook_callback') return { kind: 'unsupported_request', requestId: value.request_id, subtype: String(request.subtype) }
  const call = request.callback_id === PRE_TOOL_USE_CALLBACK_ID ? toolCallOf(request.input, request.tool_use_id) : undefined
  return { kind: 'hook_callback', requestId: value.request_id, call }
}

/** A can_use_tool request: a question when the tool is AskUserQuestion with questions we can read, else a permission. */
function canUseTool(requestId: string, request: Obj): ControlMessage {
  const toolName = typeof request.tool_name === 'string' ? request.tool_name : ''
  const input = isObj(request.input) ? request.input : {}
  const toolUseId = typeof request.tool_use_id === 'string' ? request.tool_use_id : undefined
  if (toolName === 'AskUserQuestion') {
    const questions = questionsOf(input.questions)
    if (questions) return { kind: 'ask_user_question', requestId, ...(toolUseId !== undefined && { toolUseId }), questions, input }
  }
  const call: ToolCall = { toolName, input }
  if (toolUseId !== undefined) call.toolUseId = toolUseId
  const suggestion = suggestionOf(request.permission_suggestions)
  return { kind: 'can_use_tool', requestId, call, ...(suggestion && { suggestion }) }
}

/** AskUserQuestion's `questions` as the contract has them; undefined when any is malformed. */
function questionsOf(value: unknown): QuestionItem[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined
  const out: QuestionItem[] = []
  for (const item of value) {
    if (!isObj(item) || typeof item.question !== 'string' || !Array.isArray(item.options)) return undefined
    const options = item.options
      .filter(isObj)
      .map((o) => ({ label: String(o.label ?? ''), ...(typeof o.description === 'string' && { description: o.description }) }))
    out.push({ question: item.question, ...(typeof item.header === 'string' && { header: item.header }), options, multi_select: item.multiSelect === true })
  }
  return out
}

/** The first rule of the first addRules suggestion that allows (Claude Code offers a command prefix or the exact command). */
function suggestionOf(value: unknown): { toolName: string; ruleContent?: string } | undefined {
  if (!Array.isArray(value)) return undefined
  for (const suggestion of value) {
    if (!isObj(suggestion) || suggestion.type !== 'addRules' || suggestion.behavior !== 'allow' || !Array.isArray(suggestion.rules)) continue
    const rule = suggestion.rules.find(isObj)
    if (rule && typeof rule.toolName === 'string')
      return { toolName: rule.toolName, ...(typeof rule.ruleContent === 'string' && { ruleContent: rule.ruleContent }) }
  }
  return undefined
}

/** The answer to a can_use_tool permission request. */
export function permissionAnswerLine(requestId: string, answer: PermissionAnswer): string {
  const response = answer.behavior === 'allow' ? { behavior: 'allow', updatedInput: answer.input } : { behavior: 'deny', message: answer.message }
  return JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } }) + '\n'
}

/**
 * The answer to an AskUserQuestion request: the tool's input with `answers`,
 * each question's labels joined with ", " (one string per question, as the
 * tool's schema has it); a reject is a deny with the message.
 */
export function questionAnswerLine(requestId: string, input: Obj, questions: readonly QuestionItem[], answer: QuestionAnswer): string {
  if (answer.behavior === 'reject') return permissionAnswerLine(requestId, { behavior: 'deny', message: answer.message })
  const answers: Record<string, string> = {}
  for (const [i, question] of questions.entries()) answers[question.question] = (answer.answers[i] ?? []).join(', ')
  return permissionAnswerLine(requestId, { behavior: 'allow', input: { ...input, answers } })
}

/** The initialize answer counts only when the CLI says it applied the hooks (`hooks_applied: true`, 2.1.330). */
function parseResponse(response: unknown): ControlMessage {
  if (!isObj(response) || response.request_id !== INITIALIZE_REQUEST_ID) return { kind: 'other' }
  if (response.subtype !== 'success') return { kind: 'initialized', ok: false, error: typeof response.error === 'string' ? response.error : 'no reason given' }
  if (isObj(response.response) && response.response.hooks_applied === true) return { kind: 'initialized', ok: true }
  return { kind: 'initialized', ok: false, error: 'it did not report hooks_applied' }
}

/** The tool call of a PreToolUse hook input; undefined when it is not one. */
export function toolCallOf(input: unknown, requestToolUseId?: unknown): ToolCall | undefined {
  if (!isObj(input) || input.hook_event_name !== 'PreToolUse' || typeof input.tool_name !== 'string' || input.tool_name === '') return undefined
  const call: ToolCall = { toolName: input.tool_name, input: input.tool_input ?? {} }
  const toolUseId = typeof input.tool_use_id === 'string' ? input.tool_use_id : requestToolUseId
  if (typeof toolUseId === 'string') call.toolUseId = toolUseId
  if (typeof input.cwd === 'string') call.cwd = input.cwd
  return call
}

/**
 * The answer to a hook callback. Anything but a well-formed allow is a deny,
 * so a decision that went wrong cannot let a call through.
 */
export function hookAnswerLine(requestId: string, decision: ToolDecision | undefined): string {
  const allowed = decision?.decision === 'allow'
  const reason = !allowed && decision?.decision === 'deny' && typeof decision.reason === 'string' ? decision.reason : UNCHECKED
  const response = allowed ? {} : { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }
  return JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } }) + '\n'
}

/** The error answer to a control request the runner does not serve. */
export function unsupportedAnswerLine(requestId: string, subtype: string): string {
  return (
    JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `Unsupported control request: ${subtype}` } }) + '\n'
  )
}

/** The reason given when a call could not be decided. */
export const UNCHECKED = "The agent runtime's WAF could not check this tool call, so it was not run."

/** The deny of a call the runner could not decide, with why. */
export function uncheckedDecision(why: string): ToolDecision {
  return { decision: 'deny', reason: `${UNCHECKED.slice(0, -1)}: ${why}` }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
