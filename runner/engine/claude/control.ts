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
 */
import type { ToolCall, ToolDecision } from '../../../waf/mod.ts'

/** The id the runner gives its one PreToolUse callback. */
export const PRE_TOOL_USE_CALLBACK_ID = 'agent_runtime_waf'
/** The request id of the runner's initialize request. */
export const INITIALIZE_REQUEST_ID = 'agent_runtime_init'

export type Obj = Record<string, unknown>

/** The initialize request that registers the runner's PreToolUse callback for every tool. */
export function initializeLine(timeoutSeconds: number): string {
  const hook = { matcher: '*', hookCallbackIds: [PRE_TOOL_USE_CALLBACK_ID], timeout: timeoutSeconds, onFailure: 'block' }
  return JSON.stringify({ type: 'control_request', request_id: INITIALIZE_REQUEST_ID, request: { subtype: 'initialize', hooks: { PreToolUse: [hook] } } }) + '\n'
}

/** A control message the CLI wrote on stdout. */
export type ControlMessage =
  /** A tool call to decide; `call` undefined when the request names no tool (it is denied). */
  | { kind: 'hook_callback'; requestId: string; call: ToolCall | undefined }
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
  if (value.type === 'control_cancel_request') return { kind: 'other' }
  if (value.type !== 'control_request' || typeof value.request_id !== 'string' || !isObj(value.request)) return undefined
  const request = value.request
  if (request.subtype !== 'hook_callback') return { kind: 'unsupported_request', requestId: value.request_id, subtype: String(request.subtype) }
  const call = request.callback_id === PRE_TOOL_USE_CALLBACK_ID ? toolCallOf(request.input, request.tool_use_id) : undefined
  return { kind: 'hook_callback', requestId: value.request_id, call }
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
  return JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `Unsupported control request: ${subtype}` } }) + '\n'
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
