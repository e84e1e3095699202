/**
 * The answer to an agent's `session/request_permission`: the tool gate (the
 * WAF) decides first, fail-closed; with an approver (engine.approval: ask) a
 * call the WAF allowed then goes to a person. Allow → the option of kind
 * `allow_once`, also when the person chose "allow always": an agent's own
 * "always" would run later calls without asking, past the WAF, so the
 * session's steering desk remembers the rule instead and answers those calls
 * itself. Deny, a throw, a rejected promise or no decision within the gate's
 * timeout → the option of kind `reject_once` (or `reject_always`); a
 * cancelled turn → `cancelled` (and the person's ask is withdrawn). ACP's
 * answer carries no reason: the agent tells the model only that the call was
 * rejected; the reason reaches the client through the WAF's report or the
 * `permission_resolved` event.
 */
import type { ToolDecision, ToolGate } from '../../../waf/mod.ts'
import type { Approver } from '../approver.ts'
import { type AcpToolCall, approvalToolCall, wafToolCall } from './map.ts'

type Obj = Record<string, unknown>
type Outcome = { outcome: 'cancelled' } | { outcome: 'selected'; optionId: string }

export interface PermissionRequest {
  /** The request's params: `{sessionId, toolCall, options[{optionId, name, kind}]}`. */
  params: unknown
  /** The tool call as the mapper understood it; undefined when the request names none (denied). */
  call: AcpToolCall | undefined
  cwd: string
  /** None: the agent's own rules decide, and what it asks is allowed once. */
  gate: ToolGate | undefined
  /** Asks a person about what the gate allowed; none: the gate's decision stands. */
  approver?: Approver | undefined
  /** Registers the answer a cancel of the turn gives; `done` unregisters it. */
  waitCancel(answer: (outcome: { outcome: 'cancelled' }) => void): void
  done(answer: (outcome: { outcome: 'cancelled' }) => void): void
}

/** The `session/request_permission` result. */
export async function decidePermission(request: PermissionRequest): Promise<{ outcome: Outcome }> {
  const options = optionsOf(request.params)
  const allow = options.find((o) => o.kind === 'allow_once')
  const reject = options.find((o) => o.kind === 'reject_once') ?? options.find((o) => o.kind === 'reject_always')
  const rejected: Outcome = reject ? { outcome: 'selected', optionId: reject.optionId } : { outcome: 'cancelled' }
  if (!allow) return { outcome: rejected }
  const allowed: Outcome = { outcome: 'selected', optionId: allow.optionId }
  const { gate, approver } = request
  if (!gate && !approver) return { outcome: allowed }
  if (!request.call) return { outcome: rejected }

  const call = request.call
  const withdrawn = new AbortController()
  let settle: (outcome: Outcome) => void = () => {}
  const cancelled = new Promise<Outcome>((resolve) => {
    settle = (outcome) => {
      withdrawn.abort()
      resolve(outcome)
    }
  })
  request.waitCancel(settle)
  try {
    const decided = (async (): Promise<Outcome> => {
      if (gate && (await checkInTime(gate, wafToolCall(call, request.cwd))).decision !== 'allow') return rejected
      if (!approver || withdrawn.signal.aborted) return allowed
      const answer = await approver.permission({ call: approvalToolCall(call, request.cwd) }, withdrawn.signal).catch(() => ({ behavior: 'deny' as const }))
      return answer.behavior === 'allow' ? allowed : rejected
    })()
    return { outcome: await Promise.race([decided, cancelled]) }
  } finally {
    request.done(settle)
  }
}

/** Whether an answer rejected the call (an option of kind `reject_*`). */
export function isRejection(params: unknown, outcome: Outcome): boolean {
  if (outcome.outcome !== 'selected') return false
  return optionsOf(params).some((o) => o.optionId === outcome.optionId && o.kind.startsWith('reject'))
}

/** The gate's decision, a deny when none comes within its timeout. */
async function checkInTime(gate: ToolGate, call: Parameters<ToolGate['check']>[0]): Promise<ToolDecision> {
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<ToolDecision>((resolve) => {
    timer = setTimeout(() => resolve({ decision: 'deny', reason: 'no decision in time' }), gate.timeoutSeconds * 1000)
  })
  try {
    return await Promise.race([check(gate, call), timedOut])
  } finally {
    clearTimeout(timer)
  }
}

/** The gate's decision; a throw or a rejection is a deny. */
async function check(gate: ToolGate, call: Parameters<ToolGate['check']>[0]): Promise<ToolDecision> {
  try {
    const decision = await gate.check(call)
    return decision?.decision === 'allow' ? decision : { decision: 'deny', reason: decision?.decision === 'deny' ? decision.reason : 'no decision' }
  } catch (err) {
    return { decision: 'deny', reason: `the check failed (${(err as Error).message})` }
  }
}

function optionsOf(params: unknown): { optionId: string; kind: string }[] {
  if (!isObj(params) || !Array.isArray(params.options)) return []
  return params.options
    .filter(isObj)
    .flatMap((o) => (typeof o.optionId === 'string' && typeof o.kind === 'string' ? [{ optionId: o.optionId, kind: o.kind }] : []))
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
