import type { ToolCall } from '../../waf/mod.ts'
import { allows, denies, type ApprovalRule } from './rules.ts'

/** The operator's approval settings of one engine (`engine.approval*`, `engines[].approval*`). */
export interface ApprovalPolicy {
  /** `auto`: nothing is asked (the engine's own permission mode and the WAF decide); `ask`: calls go to a person. */
  mode: 'auto' | 'ask'
  /** An unanswered request is denied after this long. */
  timeoutMs: number
  allow: readonly ApprovalRule[]
  deny: readonly ApprovalRule[]
}

/** What the rules say about a call the engine would ask a person about. */
export type Verdict = { verdict: 'allow'; rule: string } | { verdict: 'deny'; rule: string } | { verdict: 'ask' }

/**
 * Rules decide first, in this order: the operator's deny rules, the operator's
 * allow rules, then the "allow always" answers a person gave earlier in this
 * session. What none of them decides goes to a person. (The WAF decided before
 * any of this: its deny is never asked about.)
 */
export function judge(policy: ApprovalPolicy, remembered: readonly ApprovalRule[], call: ToolCall): Verdict {
  for (const rule of policy.deny) if (denies(rule, call)) return { verdict: 'deny', rule: rule.text }
  for (const rule of policy.allow) if (allows(rule, call)) return { verdict: 'allow', rule: rule.text }
  for (const rule of remembered) if (allows(rule, call)) return { verdict: 'allow', rule: rule.text }
  return { verdict: 'ask' }
}
