import { z } from 'zod'
import { DurationField, OptionalDurationField } from '../../config/fields.ts'
import type { ApprovalPolicy } from './policy.ts'
import { parseApprovalRule, type ApprovalRule } from './rules.ts'

/** A list of approval rules (`Bash(git status*)`, `Edit(src/**)`), each checked when the config is read. */
const RuleList = z.array(z.string()).transform((texts, ctx) => {
  const rules: ApprovalRule[] = []
  texts.forEach((text, index) => {
    try {
      rules.push(parseApprovalRule(text))
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: [index], message: (err as Error).message })
    }
  })
  return rules
})

export const ApprovalMode = z.enum(['auto', 'ask'])

/**
 * An engine's approval settings (`engines[].approval*`): each one absent takes
 * the `engine.approval*` default beside it.
 */
export const EngineApprovalFields = {
  approval: ApprovalMode.optional(),
  approval_timeout: OptionalDurationField({ allowZero: false }),
  approval_allow: RuleList.optional(),
  approval_deny: RuleList.optional(),
}

/** The defaults in the `engine` section. */
export const ApprovalDefaultFields = {
  /** `auto`: nothing is asked (today's behaviour: the engine's permission mode and the WAF decide); `ask`: a tool call no rule allows goes to the session's clients. */
  approval: ApprovalMode.default('auto'),
  /** An unanswered permission request or question is denied (rejected) after this. */
  approval_timeout: DurationField('5m', { allowZero: false }),
  approval_allow: RuleList.default([]),
  approval_deny: RuleList.default([]),
}

type Defaults = { approval: 'auto' | 'ask'; approval_timeout: number; approval_allow: ApprovalRule[]; approval_deny: ApprovalRule[] }
type Overrides = {
  approval?: 'auto' | 'ask' | undefined
  approval_timeout?: number | undefined
  approval_allow?: ApprovalRule[] | undefined
  approval_deny?: ApprovalRule[] | undefined
}

/** One engine's policy: its own settings where it has them, else the section's. */
export function approvalPolicy(defaults: Defaults, engine: Overrides): ApprovalPolicy {
  return {
    mode: engine.approval ?? defaults.approval,
    timeoutMs: engine.approval_timeout ?? defaults.approval_timeout,
    allow: engine.approval_allow ?? defaults.approval_allow,
    deny: engine.approval_deny ?? defaults.approval_deny,
  }
}
