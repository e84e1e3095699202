import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { EngineConfigSchema, NamedEngineSchema } from '../../../runner/engine/config.ts'
import { approvalPolicy } from '../../../runner/steering/config.ts'

describe('approval config', () => {
  it('config - the defaults: auto, 5 minutes, no rules', () => {
    const section = EngineConfigSchema.parse({})
    expect(approvalPolicy(section, {})).toEqual({ mode: 'auto', timeoutMs: 300_000, allow: [], deny: [] })
  })

  it("config - an engine entry without its own timeout takes the section's", () => {
    const section = EngineConfigSchema.parse({ approval: 'ask', approval_timeout: '3s' })
    const engine = NamedEngineSchema.parse({ name: 'c', type: 'claude', command: 'claude' })
    expect(approvalPolicy(section, engine).timeoutMs).toBe(3_000)
  })

  it('config - an engine entry overrides the section, key by key', () => {
    const section = EngineConfigSchema.parse({ approval: 'ask', approval_timeout: '30s', approval_deny: ['Bash(rm *)'] })
    const engine = NamedEngineSchema.parse({ name: 'c', type: 'claude', command: 'claude', approval_allow: ['Bash(git status*)'], approval_timeout: '2m' })
    const policy = approvalPolicy(section, engine)
    expect(policy).toMatchObject({ mode: 'ask', timeoutMs: 120_000 })
    expect(policy.allow.map((r) => r.text)).toEqual(['Bash(git status*)'])
    expect(policy.deny.map((r) => r.text)).toEqual(['Bash(rm *)'])
  })

  it.each([
    [{ approval: 'sometimes' }, ['approval'], /auto|ask/],
    [{ approval_allow: ['Bash(x'] }, ['approval_allow', 0], /not an approval rule/],
    [{ approval_deny: ['Edit()'] }, ['approval_deny', 0], /empty pattern/],
    [{ approval_timeout: '0' }, ['approval_timeout'], /must be above 0/],
    [{ approval_timeout: 5 }, ['approval_timeout'], /needs a unit/],
  ])('config - %j is refused at its key', (input, path, message) => {
    const result = EngineConfigSchema.safeParse(input)
    expect(result.success).toBe(false)
    const issue = (result.error as z.ZodError).issues[0]!
    expect(issue.path).toEqual(path)
    expect(issue.message).toMatch(message)
  })
})
