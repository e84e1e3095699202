import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Approver, PermissionAsk, QuestionAsk } from '../../../../runner/engine/approver.ts'
import { parseControl, permissionAnswerLine, questionAnswerLine } from '../../../../runner/engine/claude/control.ts'
import { ToolGateSession } from '../../../../runner/engine/claude/tool-gate.ts'
import { PERMISSION_RECORDING } from '../../../fakes/recordings/permission-prompts.ts'

/** The control lines of the real CLI's permission prompts (test/fakes/recordings/claude-2.1.330-permission-prompts.json). */
type Run = { name: string; transcript: { dir: 'stdin' | 'stdout'; line: any }[] }
const recording = JSON.parse(readFileSync(PERMISSION_RECORDING, 'utf8')) as { runs: Run[] }
const run = (name: string) => recording.runs.find((r) => r.name === name)!
const stdout = (name: string, subtype: string) => run(name).transcript.find((t) => t.dir === 'stdout' && t.line.request?.subtype === subtype)!.line
/** What the recorder answered the CLI (what made the CLI do what the recording shows). */
const stdin = (name: string, requestId: string) => run(name).transcript.find((t) => t.dir === 'stdin' && t.line.response?.request_id === requestId)!.line

describe('claude control - permission prompts as the real CLI sends them', () => {
  it("control - can_use_tool for Bash is a permission ask with the CLI's own suggestion", () => {
    const line = stdout('allow once', 'can_use_tool')
    expect(parseControl(line)).toEqual({
      kind: 'can_use_tool',
      requestId: line.request_id,
      call: { toolName: 'Bash', input: line.request.input, toolUseId: line.request.tool_use_id },
      suggestion: { toolName: 'Bash', ruleContent: line.request.permission_suggestions[0].rules[0].ruleContent },
    })
  })

  it('control - AskUserQuestion is a question with its options', () => {
    const line = stdout('question answered', 'can_use_tool')
    expect(parseControl(line)).toEqual({
      kind: 'ask_user_question',
      requestId: line.request_id,
      toolUseId: line.request.tool_use_id,
      input: line.request.input,
      questions: [
        {
          question: 'Which colour?',
          header: 'Choice',
          options: [
            { label: 'Red', description: 'Choose Red' },
            { label: 'Blue', description: 'Choose Blue' },
          ],
          multi_select: false,
        },
      ],
    })
  })

  it('control - control_cancel_request names the request it withdraws', () => {
    const cancel = run('interrupt while the request waits').transcript.find((t) => t.line.type === 'control_cancel_request')!.line
    expect(parseControl(cancel)).toEqual({ kind: 'cancel', requestId: cancel.request_id })
  })

  it.each([
    ['allow once', { behavior: 'allow' as const }],
    ['deny with a message', { behavior: 'deny' as const, message: 'The user denied this tool call: not now' }],
  ])('control - the answer for %s is the one the CLI acted on', (name, answer) => {
    const request = stdout(name, 'can_use_tool')
    const line = permissionAnswerLine(request.request_id, answer.behavior === 'allow' ? { behavior: 'allow', input: request.request.input } : answer)
    expect(JSON.parse(line)).toEqual(stdin(name, request.request_id))
  })

  it.each([
    ['question answered', { behavior: 'answer' as const, answers: [['Blue']] }],
    ['question rejected', { behavior: 'reject' as const, message: 'The user denied this tool call: not now' }],
  ])('control - the answer for %s is the one the CLI acted on', (name, answer) => {
    const request = stdout(name, 'can_use_tool')
    const message = parseControl(request) as Extract<ReturnType<typeof parseControl>, { kind: 'ask_user_question' }>
    const line = questionAnswerLine(request.request_id, message.input, message.questions, answer)
    expect(JSON.parse(line)).toEqual(stdin(name, request.request_id))
  })

  it('control - multi-select labels join with a comma, one string per question', () => {
    const questions = [
      { question: 'A?', options: [], multi_select: true },
      { question: 'B?', options: [], multi_select: false },
    ]
    const line = JSON.parse(questionAnswerLine('r', { questions: [] }, questions, { behavior: 'answer', answers: [['x', 'y'], ['z']] }))
    expect(line.response.response.updatedInput.answers).toEqual({ 'A?': 'x, y', 'B?': 'z' })
  })
})

describe('claude control - the session asks the approver', () => {
  function session(approver: Approver | undefined) {
    const written: any[] = []
    const gate = new ToolGateSession(
      { approver },
      (line) => written.push(JSON.parse(line)),
      () => {},
    )
    return { gate, written }
  }

  it('session - no initialize without a tool gate; a permission goes to the approver and its answer to the CLI', async () => {
    const asked: PermissionAsk[] = []
    const permission = async (ask: PermissionAsk) => {
      asked.push(ask)
      return { behavior: 'allow' as const, input: ask.call.input }
    }
    const { gate, written } = session({ permission, question: async () => ({ behavior: 'reject', message: 'x' }) })
    expect(written).toEqual([])
    const request = stdout('allow once', 'can_use_tool')
    gate.handle(request)
    await new Promise((resolve) => setImmediate(resolve))
    expect(asked.map((a) => a.call.toolName)).toEqual(['Bash'])
    expect(written).toEqual([stdin('allow once', request.request_id)])
  })

  it('session - a request the CLI withdraws is withdrawn from the approver and not answered', async () => {
    let signal: AbortSignal | undefined
    const { gate, written } = session({
      permission: (_ask, s) => {
        signal = s
        return new Promise((resolve) => s?.addEventListener('abort', () => resolve({ behavior: 'deny', message: 'withdrawn' })))
      },
      question: async (_ask: QuestionAsk) => ({ behavior: 'reject', message: 'x' }),
    })
    const request = stdout('interrupt while the request waits', 'can_use_tool')
    gate.handle(request)
    gate.handle({ type: 'control_cancel_request', request_id: request.request_id })
    await new Promise((resolve) => setImmediate(resolve))
    expect(signal?.aborted).toBe(true)
    expect(written).toEqual([])
  })

  it('session - without an approver a permission request is answered unsupported (the CLI denies it)', () => {
    const { gate, written } = session(undefined)
    const request = stdout('allow once', 'can_use_tool')
    gate.handle(request)
    expect(written).toEqual([
      { type: 'control_response', response: { subtype: 'error', request_id: request.request_id, error: 'Unsupported control request: can_use_tool' } },
    ])
  })
})
