import { describe, expect, it } from 'vitest'
import { allows, alwaysRule, denies, parseApprovalRule, subjectOf } from '../../../runner/steering/rules.ts'
import type { ToolCall } from '../../../waf/mod.ts'

const bash = (command: string): ToolCall => ({ toolName: 'Bash', input: { command, description: 'x' }, cwd: '/w' })
const edit = (file: string): ToolCall => ({ toolName: 'Edit', input: { file_path: file, old_string: 'a', new_string: 'b' }, cwd: '/w' })

describe('approval rules - parsing', () => {
  it.each([
    ['Bash', { tool: 'Bash' }],
    ['Bash(git status*)', { tool: 'Bash', pattern: 'git status*' }],
    ['  Edit(src/**) ', { tool: 'Edit', pattern: 'src/**' }],
    ['mcp__github__create_issue', { tool: 'mcp__github__create_issue' }],
    ['*', { tool: '*' }],
    ['Bash(echo (nested))', { tool: 'Bash', pattern: 'echo (nested)' }],
  ])('rules - %s parses', (text, expected) => {
    expect(parseApprovalRule(text)).toMatchObject(expected)
  })

  it.each([
    ['Bash()', /empty pattern/],
    ['(x)', /not an approval rule/],
    ['Bash(x', /not an approval rule/],
    ['', /not an approval rule/],
    ['two words', /not an approval rule/],
  ])('rules - %j is refused with a reason', (text, reason) => {
    expect(() => parseApprovalRule(text)).toThrow(reason)
  })
})

describe('approval rules - allow', () => {
  it.each<[string, ToolCall, boolean]>([
    ['Bash(git status*)', bash('git status'), true],
    ['Bash(git status*)', bash('git status --short'), true],
    ['Bash(git status*)', bash('git log'), false],
    ['Bash(git status*)', bash('git status; rm -rf ~'), false],
    ['Bash(git status*)', bash('git status && curl x | sh'), false],
    ['Bash(git status*)', bash('git status $(rm -rf ~)'), false],
    ['Bash(git status*)', bash('git status > /etc/passwd'), false],
    ['Bash(git status*)', bash('git status\nrm -rf ~'), false],
    ['Bash(npm run test:*)', bash('npm run test -- --watch'), true],
    ['Bash(npm run test:*)', bash('npm run build'), false],
    ['Bash', bash('anything at all; even this'), true],
    ['Edit(src/**)', edit('/w/src/a/b.ts'), true],
    ['Edit(src/**)', edit('src/x.ts'), true],
    ['Edit(src/**)', edit('/w/test/x.ts'), false],
    ['Edit(src/*.ts)', edit('/w/src/a/b.ts'), false],
    ['Edit(src/*.ts)', edit('/w/src/b.ts'), true],
    ['Edit(src/**/b.ts)', edit('/w/src/b.ts'), true],
    ['Edit(/etc/**)', edit('/etc/passwd'), true],
    ['Edit(src/**)', bash('src/x'), false],
    ['Write(src/**)', edit('/w/src/x.ts'), false],
    ['*', edit('/w/anything'), true],
    ['WebFetch(https://docs.example.com/*)', { toolName: 'WebFetch', input: { url: 'https://docs.example.com/a' } }, true],
    ['WebFetch(https://docs.example.com/*)', { toolName: 'WebFetch', input: { url: 'https://evil.example/a' } }, false],
    ['Bash(echo a\\*b)', bash('echo a*b'), true],
    ['Bash(echo a\\*b)', bash('echo aXb'), false],
    ['Bash(ls ?)', bash('ls a'), true],
    ['Bash(touch canary *)', bash('touch canary'), true],
    ['Bash(touch canary *)', bash('touch canary b'), true],
    ['Bash(ls *)', bash('lsof'), false],
    ['Bash(git *)', bash('git'), true],
  ])('allow - %s on %j: %s', (text, call, expected) => {
    expect(allows(parseApprovalRule(text), call)).toBe(expected)
  })
})

describe('approval rules - deny', () => {
  it.each<[string, ToolCall, boolean]>([
    ['Bash(rm *)', bash('rm -rf x'), true],
    ['Bash(rm *)', bash('cd x && rm -rf y'), true],
    ['Bash(rm *)', bash('echo $(rm -rf y)'), true],
    ['Bash(rm *)', bash('ls | rm -rf y'), true],
    ['Bash(rm *)', bash('echo rm'), false],
    ['Bash(curl:*)', bash('true; curl http://x'), true],
    ['Edit(.env*)', edit('/w/.env.local'), true],
    ['Edit(.env*)', edit('/w/src/.env'), false],
    ['Bash', bash('ls'), true],
    ['Read', bash('ls'), false],
  ])('deny - %s on %j: %s', (text, call, expected) => {
    expect(denies(parseApprovalRule(text), call)).toBe(expected)
  })
})

describe('approval rules - allow always', () => {
  it('always - the engine suggestion becomes the rule', () => {
    const rule = alwaysRule(bash('npm run test -- a'), { toolName: 'Bash', ruleContent: 'npm run test:*' })
    expect(rule.text).toBe('Bash(npm run test:*)')
    expect(allows(rule, bash('npm run test -- b'))).toBe(true)
    expect(allows(rule, bash('npm run lint'))).toBe(false)
  })

  it('always - without a suggestion, exactly this call and nothing else', () => {
    const call = bash('touch a*b && echo ?')
    const rule = alwaysRule(call)
    expect(rule.text).toBe('Bash(touch a\\*b && echo \\?)')
    expect(allows(rule, call)).toBe(true)
    expect(allows(rule, bash('touch aXb && echo ?'))).toBe(false)
    expect(allows(rule, bash('touch a*b && echo ?; rm -rf ~'))).toBe(false)
  })

  it('always - a suggestion for another tool is not taken', () => {
    expect(alwaysRule(edit('/w/a'), { toolName: 'Bash', ruleContent: 'ls:*' })).toMatchObject({ tool: 'Edit', pattern: 'a', exact: true })
  })

  it('always - a tool with no known subject matches its whole input', () => {
    const call: ToolCall = { toolName: 'mcp__x__y', input: { a: 1 } }
    expect(subjectOf(call)).toEqual({ text: '{"a":1}', kind: 'input' })
    expect(allows(alwaysRule(call), call)).toBe(true)
    expect(allows(alwaysRule(call), { toolName: 'mcp__x__y', input: { a: 2 } })).toBe(false)
  })
})
