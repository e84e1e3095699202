import { describe, expect, it } from 'vitest'
import { judge, type ApprovalPolicy } from '../../../runner/steering/policy.ts'
import { parseApprovalRule } from '../../../runner/steering/rules.ts'
import type { ToolCall } from '../../../waf/mod.ts'

const policy = (allow: string[], deny: string[]): ApprovalPolicy => ({
  mode: 'ask',
  timeoutMs: 1000,
  allow: allow.map(parseApprovalRule),
  deny: deny.map(parseApprovalRule),
})
const bash = (command: string): ToolCall => ({ toolName: 'Bash', input: { command } })

describe('approval policy - judge', () => {
  it.each<[string, ApprovalPolicy, string[], ToolCall, ReturnType<typeof judge>]>([
    ['nothing decides: ask', policy([], []), [], bash('ls'), { verdict: 'ask' }],
    ['an allow rule', policy(['Bash(ls*)'], []), [], bash('ls -la'), { verdict: 'allow', rule: 'Bash(ls*)' }],
    ['deny wins over allow', policy(['Bash'], ['Bash(rm *)']), [], bash('rm x'), { verdict: 'deny', rule: 'Bash(rm *)' }],
    ['deny wins over a remembered answer', policy([], ['Bash(rm *)']), ['Bash(rm x)'], bash('rm x'), { verdict: 'deny', rule: 'Bash(rm *)' }],
    ['a remembered answer', policy([], []), ['Bash(ls:*)'], bash('ls /'), { verdict: 'allow', rule: 'Bash(ls:*)' }],
    ['operator allow before remembered', policy(['Bash(ls*)'], []), ['Bash(ls:*)'], bash('ls /'), { verdict: 'allow', rule: 'Bash(ls*)' }],
    ['a compound command is asked', policy(['Bash(ls*)'], []), [], bash('ls; rm x'), { verdict: 'ask' }],
  ])('judge - %s', (_name, given, remembered, call, expected) => {
    expect(judge(given, remembered.map(parseApprovalRule), call)).toEqual(expected)
  })
})
