import { z } from 'zod'
import { DEFAULT_RULES } from './default-rules.ts'
import { backtrackingProblem } from './redos-check.ts'
import { RuleId, WafRuleSchema, type WafRule } from './rule.ts'

/**
 * A rule from the configuration file: the rule schema, plus the ReDoS checker
 * (redos-check.ts) on its pattern, so a catastrophic-backtracking pattern is
 * refused at start with the rule's id. A pattern identical to a default
 * rule's (redeclaring a default to change its level) is not checked again:
 * the defaults are held to bounded gaps and tested on adversarial input.
 */
export const OperatorRuleSchema = WafRuleSchema.superRefine((rule, ctx) => {
  if (DEFAULT_RULES.some((d) => d.pattern === rule.pattern && d.flags === rule.flags)) return
  try {
    new RegExp(rule.pattern, rule.flags)
  } catch {
    return // reported by WafRuleSchema
  }
  const problem = backtrackingProblem(rule.pattern, rule.flags)
  if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['pattern'], message: `WAF rule "${rule.id}": the pattern ${problem}` })
})

/**
 * The `waf` section of the configuration file: extra rules (a rule whose id
 * equals a default rule's id replaces it, e.g. to change its level) and the ids
 * of rules to turn off.
 */
export const WafConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    rules: z.array(OperatorRuleSchema).default([]),
    disabled_rules: z.array(RuleId).default([]),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>()
    config.rules.forEach((rule, index) => {
      if (seen.has(rule.id)) ctx.addIssue({ code: 'custom', path: ['rules', index, 'id'], message: `duplicate rule id "${rule.id}"` })
      seen.add(rule.id)
    })
    const known = new Set([...DEFAULT_RULES.map((r) => r.id), ...seen])
    config.disabled_rules.forEach((id, index) => {
      if (!known.has(id)) ctx.addIssue({ code: 'custom', path: ['disabled_rules', index], message: `no rule has the id "${id}"` })
    })
  })

export type WafConfig = z.output<typeof WafConfigSchema>
export type WafConfigInput = z.input<typeof WafConfigSchema>

/**
 * The effective rule list: the defaults, each replaced by a config rule of the
 * same id, then the new config rules; ids in `disabled_rules` come out with
 * `enabled: false`. With `enabled: false` for the whole section, every rule is off.
 */
export function resolveRules(config: WafConfig, defaults: readonly WafRule[] = DEFAULT_RULES): WafRule[] {
  const overrides = new Map(config.rules.map((r) => [r.id, r]))
  const merged = defaults.map((rule) => overrides.get(rule.id) ?? rule)
  const defaultIds = new Set(defaults.map((r) => r.id))
  merged.push(...config.rules.filter((r) => !defaultIds.has(r.id)))
  const disabled = new Set(config.disabled_rules)
  return merged.map((rule) => (!config.enabled || disabled.has(rule.id) ? { ...rule, enabled: false } : rule))
}
