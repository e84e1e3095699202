import { describe, expect, it } from 'vitest'
import type { ErrorCode, QuestionItem, ServiceEvent } from '../../../contract/mod.ts'
import type { EventDraft } from '../../../runner/event-draft.ts'
import { answersProblem, SteeringDesk, titleOf } from '../../../runner/steering/desk.ts'
import { parseApprovalRule } from '../../../runner/steering/rules.ts'
import type { ToolCall } from '../../../waf/mod.ts'

const bash = (command: string): ToolCall => ({ toolName: 'Bash', input: { command, description: 'd' }, toolUseId: 'toolu_1' })
const colour: QuestionItem = { question: 'Which colour?', header: 'Colour', options: [{ label: 'Red' }, { label: 'Blue' }], multi_select: false }
const extras: QuestionItem = { question: 'Which extras?', options: [{ label: 'A' }, { label: 'B' }], multi_select: true }

function desk(options: { timeoutMs?: number; allow?: string[]; deny?: string[] } = {}) {
  const events: EventDraft[] = []
  const waiting: boolean[] = []
  const d = new SteeringDesk({
    policy: {
      mode: 'ask',
      timeoutMs: options.timeoutMs ?? 60_000,
      allow: (options.allow ?? []).map(parseApprovalRule),
      deny: (options.deny ?? []).map(parseApprovalRule),
    },
    emit: (draft) => events.push(draft),
    onWaiting: (w) => waiting.push(w),
  })
  const last = <N extends ServiceEvent['event']>(name: N) => events.filter((e) => e.event === name).at(-1) as Extract<EventDraft, { event: N }>
  return { d, events, waiting, last }
}

function codeOf(fn: () => void): ErrorCode | undefined {
  try {
    fn()
  } catch (err) {
    return (err as { code?: ErrorCode }).code
  }
  return undefined
}

describe('steering desk - permissions', () => {
  it('desk - a request is announced, the first valid reply settles it, a second is ALREADY_ANSWERED', async () => {
    const { d, last, waiting } = desk()
    const answer = d.permission({ call: bash('touch x'), suggestion: { toolName: 'Bash', ruleContent: 'touch:*' } })
    const request = last('permission_request').permission
    expect(request).toMatchObject({
      tool: { id: 'toolu_1', name: 'Bash', input: { command: 'touch x' } },
      title: 'Bash: touch x',
      options: ['allow_once', 'allow_always', 'deny'],
      always: 'Bash(touch:*)',
    })
    expect(request.id).toMatch(/^per_/)
    expect(d.pending().permissions).toEqual([request])
    d.reply({ kind: 'permission', id: request.id, decision: 'allow_once' }, 'alice')
    await expect(answer).resolves.toEqual({ behavior: 'allow', input: { command: 'touch x', description: 'd' } })
    expect(last('permission_resolved')).toMatchObject({ permission_id: request.id, decision: 'allow_once', source: 'client', by: 'alice' })
    expect(d.pending()).toEqual({ permissions: [], questions: [] })
    expect(codeOf(() => d.reply({ kind: 'permission', id: request.id, decision: 'deny' }))).toBe('ALREADY_ANSWERED')
    expect(waiting).toEqual([true, false])
  })

  it('desk - allow always: the same kind of call is not asked again in this session', async () => {
    const { d, last, events } = desk()
    const first = d.permission({ call: bash('npm run test -- a'), suggestion: { toolName: 'Bash', ruleContent: 'npm run test:*' } })
    d.reply({ kind: 'permission', id: last('permission_request').permission.id, decision: 'allow_always' })
    await first
    const asked = events.filter((e) => e.event === 'permission_request').length
    await expect(d.permission({ call: bash('npm run test -- b') })).resolves.toMatchObject({ behavior: 'allow' })
    expect(events.filter((e) => e.event === 'permission_request').length).toBe(asked)
    expect(last('permission_resolved')).toMatchObject({ source: 'rule', rule: 'Bash(npm run test:*)', decision: 'allow_once', tool: { name: 'Bash' } })
    expect(d.remembered.map((r) => r.text)).toEqual(['Bash(npm run test:*)'])
  })

  it("desk - deny: the agent reads the person's message", async () => {
    const { d, last } = desk()
    const answer = d.permission({ call: bash('rm x') })
    d.reply({ kind: 'permission', id: last('permission_request').permission.id, decision: 'deny', message: 'not that file' })
    await expect(answer).resolves.toEqual({ behavior: 'deny', message: 'The user denied this tool call: not that file' })
    expect(last('permission_resolved')).toMatchObject({ decision: 'deny', source: 'client' })
  })

  it('desk - operator rules decide without asking, and say which rule', async () => {
    const { d, events } = desk({ allow: ['Bash(ls*)'], deny: ['Bash(rm *)'] })
    await expect(d.permission({ call: bash('ls -la') })).resolves.toMatchObject({ behavior: 'allow' })
    await expect(d.permission({ call: bash('cd / && rm -rf x') })).resolves.toEqual({
      behavior: 'deny',
      message: "The operator's rule Bash(rm *) denies this tool call.",
    })
    expect(events.map((e) => e.event)).toEqual(['permission_resolved', 'permission_resolved'])
    expect(events).toMatchObject([
      { source: 'rule', rule: 'Bash(ls*)' },
      { source: 'rule', rule: 'Bash(rm *)', decision: 'deny' },
    ])
  })

  it('desk - unanswered: denied at expires_at, with a reason the agent reads', async () => {
    const { d, last } = desk({ timeoutMs: 20 })
    const answer = d.permission({ call: bash('touch y') })
    const id = last('permission_request').permission.id
    await expect(answer).resolves.toEqual({ behavior: 'deny', message: 'No one answered within 0 s; the tool call was denied.' })
    expect(last('permission_resolved')).toMatchObject({ permission_id: id, decision: 'deny', source: 'timeout' })
    expect(codeOf(() => d.reply({ kind: 'permission', id, decision: 'allow_once' }))).toBe('ALREADY_ANSWERED')
    expect(last('permission_resolved').waited_ms).toBeGreaterThanOrEqual(15)
  })

  it('desk - the CLI withdrawing the request (abort) settles it as turn_ended', async () => {
    const { d, last } = desk()
    const abort = new AbortController()
    const answer = d.permission({ call: bash('touch z') }, abort.signal)
    abort.abort()
    await expect(answer).resolves.toMatchObject({ behavior: 'deny' })
    expect(last('permission_resolved')).toMatchObject({ source: 'turn_ended' })
  })

  it.each<[string, Parameters<SteeringDesk['reply']>[0], ErrorCode]>([
    ['an unknown id', { kind: 'permission', id: 'per_nope', decision: 'allow_once' }, 'PERMISSION_NOT_FOUND'],
    ['an answer to a permission request', { kind: 'answer', id: '<id>', answers: [['x']] }, 'BAD_REQUEST'],
    ['a reject of a permission request', { kind: 'reject', id: '<id>' }, 'BAD_REQUEST'],
  ])('desk - %s is refused with %s, and the request still waits', async (_name, reply, code) => {
    const { d, last } = desk()
    void d.permission({ call: bash('touch q') })
    const id = last('permission_request').permission.id
    expect(codeOf(() => d.reply({ ...reply, id: reply.id === '<id>' ? id : reply.id }))).toBe(code)
    expect(d.pending().permissions.map((p) => p.id)).toEqual([id])
  })
})

describe('steering desk - questions', () => {
  it('desk - a question is answered with one label list per question', async () => {
    const { d, last } = desk()
    const answer = d.question({ toolUseId: 't', questions: [colour, extras] })
    const request = last('question').question
    expect(last('question').data).toBe('Which colour?')
    expect(d.pending().questions).toEqual([request])
    d.reply({ kind: 'answer', id: request.id, answers: [['Blue'], ['A', 'B']] }, 'bob')
    await expect(answer).resolves.toEqual({ behavior: 'answer', answers: [['Blue'], ['A', 'B']] })
    expect(last('question_resolved')).toMatchObject({ question_id: request.id, answers: [['Blue'], ['A', 'B']], source: 'client', by: 'bob' })
  })

  it('desk - a rejected question tells the agent the person declined', async () => {
    const { d, last } = desk()
    const answer = d.question({ questions: [colour] })
    d.reply({ kind: 'reject', id: last('question').question.id, message: 'ask later' })
    await expect(answer).resolves.toEqual({ behavior: 'reject', message: 'The user declined to answer: ask later' })
    expect(last('question_resolved')).toMatchObject({ source: 'client', data: 'rejected' })
    expect(last('question_resolved').answers).toBeUndefined()
  })

  it.each<[string, string[][], RegExp | undefined]>([
    ['one label each', [['Red'], ['A']], undefined],
    ['free text counts as an answer', [['Green, please'], ['A', 'B']], undefined],
    ['too few lists', [['Red']], /1 lists; the question has 2/],
    ['two labels for a single-choice question', [['Red', 'Blue'], ['A']], /takes one answer, not 2/],
  ])('answers - %s', (_name, answers, problem) => {
    const result = answersProblem({ id: 'q', questions: [colour, extras], expires_at: 0 }, answers)
    if (problem) expect(result).toMatch(problem)
    else expect(result).toBeUndefined()
  })

  it('desk - the end of the turn settles every waiting request', async () => {
    const { d, waiting } = desk()
    const p = d.permission({ call: bash('a') })
    const q = d.question({ questions: [colour] })
    d.endTurn()
    await expect(p).resolves.toMatchObject({ behavior: 'deny', message: 'The turn ended before anyone answered; the tool call was denied.' })
    await expect(q).resolves.toMatchObject({ behavior: 'reject' })
    expect(waiting).toEqual([true, false])
  })
})

describe('steering desk - titles', () => {
  it.each([
    ['Bash', { command: 'git status\nsecond line' }, 'Bash: git status'],
    ['Edit', { file_path: '/w/a.ts' }, 'Edit: /w/a.ts'],
    ['WebFetch', { url: 'https://x' }, 'WebFetch: https://x'],
    ['mcp__x', { a: 1 }, 'mcp__x'],
    ['Bash', { command: 'x'.repeat(300) }, `Bash: ${'x'.repeat(193)}…`],
  ])('title - %s %j', (tool, input, title) => {
    expect(titleOf(tool, input)).toBe(title)
  })
})
