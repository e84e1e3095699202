import { describe, expect, it } from 'vitest'
import { DEFAULT_RULES } from '../../waf/default-rules.ts'
import { WAF_CATEGORIES, WafRuleSchema, type WafRule, type WafRuleInput } from '../../waf/rule.ts'
import { resolveRules, WafConfigSchema } from '../../waf/rules.ts'

const valid: WafRuleInput = {
  id: 'custom.terraform-destroy',
  pattern: String.raw`^terraform destroy\b`,
  flags: 'm',
  category: 'custom',
  level: 'block',
  description: 'infrastructure teardown is done by the release pipeline, not by an agent',
  applies_to: ['command'],
}

/** The issues of a rejected rule as "path: message" lines. */
function issues(input: unknown): string[] {
  const result = WafRuleSchema.safeParse(input)
  if (result.success) return []
  return result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
}

describe('waf rules', () => {
  it('rules - every default rule validates against the schema', () => {
    const failures = DEFAULT_RULES.flatMap((rule) => issues(rule).map((i) => `${rule.id} ${i}`))
    expect(failures).toEqual([])
  })

  it('rules - default ids are unique and every rule is enabled', () => {
    const ids = DEFAULT_RULES.map((r) => r.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(DEFAULT_RULES.filter((r) => !r.enabled)).toEqual([])
  })

  it('rules - the defaults cover every danger family of the issue', () => {
    const covered = new Set(DEFAULT_RULES.filter((r) => r.level === 'block').map((r) => r.category))
    const expected = WAF_CATEGORIES.filter((c) => c !== 'custom' && c !== 'source_control')
    expect(expected.filter((c) => !covered.has(c))).toEqual([])
  })

  it('rules - a complete rule parses and gets its defaults', () => {
    const { flags, level, enabled, ...minimal } = valid
    void flags
    void level
    void enabled
    expect(WafRuleSchema.parse({ ...minimal, pattern: 'terraform destroy' })).toEqual({
      ...minimal,
      pattern: 'terraform destroy',
      flags: '',
      level: 'block',
      enabled: true,
    })
  })

  it.each([
    { name: 'invalid regex', rule: { ...valid, pattern: '(unclosed' }, path: 'pattern', says: 'invalid regular expression' },
    { name: 'invalid flag combination', rule: { ...valid, flags: 'uv' }, path: 'pattern', says: 'invalid regular expression' },
    { name: 'unknown category', rule: { ...valid, category: 'evil' }, path: 'category', says: 'unknown category; use one of: filesystem_destruction' },
    { name: 'unknown level', rule: { ...valid, level: 'deny' }, path: 'level', says: 'level must be "block" or "warn"' },
    { name: 'unknown target', rule: { ...valid, applies_to: ['shell'] }, path: 'applies_to.0', says: 'unknown target; use one of: prompt, command' },
    { name: 'no target', rule: { ...valid, applies_to: [] }, path: 'applies_to', says: 'at least one target' },
    { name: 'repeated target', rule: { ...valid, applies_to: ['command', 'command'] }, path: 'applies_to', says: 'must not repeat' },
    { name: 'global flag', rule: { ...valid, flags: 'gi' }, path: 'flags', says: 'g and y make a RegExp stateful' },
    { name: 'sticky flag', rule: { ...valid, flags: 'y' }, path: 'flags', says: 'g and y make a RegExp stateful' },
    { name: 'repeated flag', rule: { ...valid, flags: 'ii' }, path: 'flags', says: 'must not repeat' },
    { name: 'pattern matching everything', rule: { ...valid, pattern: 'x*' }, path: 'pattern', says: 'matches the empty string' },
    { name: 'nested unbounded quantifier', rule: { ...valid, pattern: '(a+)+b' }, path: 'pattern', says: 'backtrack catastrophically' },
    {
      name: 'nested unbounded quantifier in a class-free group',
      rule: { ...valid, pattern: String.raw`(?:\s*x)*y` },
      path: 'pattern',
      says: 'bound the outer repetition',
    },
    { name: 'empty pattern', rule: { ...valid, pattern: '' }, path: 'pattern', says: '' },
    { name: 'bad id', rule: { ...valid, id: 'Has Spaces' }, path: 'id', says: 'lowercase words' },
    { name: 'missing description', rule: { ...valid, description: undefined }, path: 'description', says: '' },
    { name: 'unknown key', rule: { ...valid, severity: 'high' }, path: '', says: 'severity' },
  ])('rules - the schema rejects $name with a message naming the field', ({ rule, path, says }) => {
    const found = issues(rule)
    expect(found.length).toBeGreaterThan(0)
    expect(found.some((i) => i.startsWith(`${path}: `) && i.includes(says))).toBe(true)
  })

  it.each([
    { name: 'bounded outer repetition', pattern: String.raw`(?:\s+\S+){0,32}x` },
    { name: 'unbounded group without inner quantifier', pattern: '(?:ab)+c' },
    { name: 'quantifier inside a class', pattern: '[+*]+x' },
    { name: 'escaped parenthesis', pattern: String.raw`\(a+\)+` },
  ])('rules - the schema accepts safe shapes: $name', ({ pattern }) => {
    expect(issues({ ...valid, pattern })).toEqual([])
  })
})

describe('waf config', () => {
  it('config - defaults to no extra rule and nothing disabled', () => {
    expect(WafConfigSchema.parse({})).toEqual({ enabled: true, rules: [], disabled_rules: [] })
  })

  it.each([
    { name: 'an unknown disabled id', config: { disabled_rules: ['fs.rm-rootz'] }, says: 'no rule has the id "fs.rm-rootz"' },
    { name: 'two extra rules with one id', config: { rules: [valid, valid] }, says: 'duplicate rule id' },
    { name: 'an invalid extra rule', config: { rules: [{ ...valid, category: 'nope' }] }, says: 'unknown category' },
    { name: 'an unknown key', config: { rule: [] }, says: 'rule' },
  ])('config - rejects $name', ({ config, says }) => {
    const result = WafConfigSchema.safeParse(config)
    expect(result.success).toBe(false)
    expect(result.error!.issues.map((i) => i.message).join('\n')).toContain(says)
  })

  it('config - a disabled_rules id may name an extra rule', () => {
    expect(WafConfigSchema.safeParse({ rules: [valid], disabled_rules: [valid.id] }).success).toBe(true)
  })

  it('config - resolveRules disables, overrides by id and appends', () => {
    const override = { ...DEFAULT_RULES.find((r) => r.id === 'git.rewrite-shared-branch')!, level: 'block' as const }
    const config = WafConfigSchema.parse({ rules: [valid, override], disabled_rules: ['fs.rm-root'] })
    const rules = resolveRules(config)
    const byId = new Map(rules.map((r) => [r.id, r]))
    expect(rules).toHaveLength(DEFAULT_RULES.length + 1)
    expect(byId.get('fs.rm-root')!.enabled).toBe(false)
    expect(byId.get('git.rewrite-shared-branch')!.level).toBe('block')
    expect(byId.get(valid.id)).toMatchObject({ id: valid.id, enabled: true })
    // Order: defaults first (overrides in place), then new rules.
    expect(rules.at(-1)!.id).toBe(valid.id)
  })

  it('config - enabled: false turns every rule off', () => {
    const rules = resolveRules(WafConfigSchema.parse({ enabled: false, rules: [valid] }))
    expect(rules.filter((r: WafRule) => r.enabled)).toEqual([])
  })
})
