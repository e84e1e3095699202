import { describe, expect, it } from 'vitest'
import { backtrackingProblem } from '../../waf/redos-check.ts'
import { DEFAULT_RULES } from '../../waf/default-rules.ts'
import { WafConfigSchema } from '../../waf/rules.ts'

const rule = (pattern: string) => ({ id: 'custom.slow', pattern, flags: 'm', category: 'custom', description: 'd', applies_to: ['command'] })

describe('waf ReDoS check (recheck) of operator rules', () => {
  it.each([
    { pattern: '^(a+)+$', safe: false },
    { pattern: '(a|a)*b', safe: false }, // overlapping alternatives: the old heuristic let it through
    { pattern: String.raw`\s*x\s*$`, safe: false }, // polynomial
    { pattern: String.raw`\d+\.\d+\.\d+`, safe: false },
    { pattern: String.raw`^terraform destroy\b`, safe: true },
    { pattern: String.raw`curl.{0,400}\|.{0,400}sh`, safe: true },
    { pattern: '^(?:a|b)*$', safe: true },
  ])('redos - $pattern safe: $safe', ({ pattern, safe }) => {
    expect(backtrackingProblem(pattern, 'm') === undefined).toBe(safe)
  })

  it('redos - a catastrophic rule in the config is refused at start, naming the rule id', () => {
    const result = WafConfigSchema.safeParse({ rules: [rule('^deploy (\\w+\\s?)*$')] })
    expect(result.success).toBe(false)
    const messages = result.error!.issues.filter((i) => i.path.join('.') === 'rules.0.pattern').map((i) => i.message)
    expect(messages.every((m) => m.includes('"custom.slow"'))).toBe(true)
    expect(messages.some((m) => m.includes('exponential'))).toBe(true)
  })

  it('redos - a pattern that cannot be decided in time is refused too', () => {
    expect(backtrackingProblem(String.raw`^(?:rm)(?: \S+){0,32}? /etc`, 'm', 50)).toContain('could not be shown safe')
  })

  it('redos - redeclaring a default rule with its own pattern (to change its level) is accepted', () => {
    const git = DEFAULT_RULES.find((r) => r.id === 'git.rewrite-shared-branch')!
    expect(WafConfigSchema.safeParse({ rules: [{ ...git, level: 'block' }] }).success).toBe(true)
  })
})
