import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  hookAnswerLine,
  INITIALIZE_REQUEST_ID,
  initializeLine,
  parseControl,
  PRE_TOOL_USE_CALLBACK_ID,
  UNCHECKED,
  unsupportedAnswerLine,
} from '../../../../runner/engine/claude/control.ts'
import { parseClaudeLine } from '../../../../runner/engine/claude/parse.ts'
import { ToolGateSession } from '../../../../runner/engine/claude/tool-gate.ts'
import type { ToolDecision, ToolGate } from '../../../../waf/mod.ts'
import { RECORDING } from '../../../fakes/recordings/hook-callbacks.ts'

/** The hook_callback request the real CLI 2.1.330 wrote (from the recording), with the runner's callback id. */
const recorded = JSON.parse(readFileSync(RECORDING, 'utf8')) as { runs: { transcript: { dir: string; line: any }[] }[] }
const recordedRequest = recorded.runs[0]!.transcript.find((entry) => entry.line?.request?.subtype === 'hook_callback')!.line
const callbackLine = (over: Record<string, unknown> = {}) =>
  JSON.stringify({ ...recordedRequest, request: { ...recordedRequest.request, callback_id: PRE_TOOL_USE_CALLBACK_ID, ...over } })

/** A stdout line as parse.ts hands it to the gate. */
const message = (line: string) => JSON.parse(line) as Record<string, unknown>

const answerOf = (line: string) => JSON.parse(line).response as { subtype: string; request_id: string; response?: any; error?: string }

describe('claude control - protocol mapping', () => {
  it('initialize - one PreToolUse callback for every tool that blocks when the answer fails', () => {
    expect(JSON.parse(initializeLine(10))).toEqual({
      type: 'control_request',
      request_id: INITIALIZE_REQUEST_ID,
      request: {
        subtype: 'initialize',
        hooks: { PreToolUse: [{ matcher: '*', hookCallbackIds: [PRE_TOOL_USE_CALLBACK_ID], timeout: 10, onFailure: 'block' }] },
      },
    })
    expect(initializeLine(10).endsWith('}\n')).toBe(true)
  })

  it('hook_callback - the recorded request maps to the tool call', () => {
    expect(parseControl(message(callbackLine()))).toEqual({
      kind: 'hook_callback',
      requestId: recordedRequest.request_id,
      call: {
        toolName: 'Bash',
        input: recordedRequest.request.input.tool_input,
        toolUseId: recordedRequest.request.tool_use_id,
        cwd: recordedRequest.request.input.cwd,
      },
    })
  })

  it.each([
    { name: 'another callback id', over: { callback_id: 'someone_else' } },
    { name: 'no input', over: { input: undefined } },
    { name: 'not a PreToolUse input', over: { input: { ...recordedRequest.request.input, hook_event_name: 'PostToolUse' } } },
    { name: 'no tool name', over: { input: { ...recordedRequest.request.input, tool_name: '' } } },
    { name: 'input not an object', over: { input: 'Bash' } },
  ])('hook_callback - $name: no tool call (the runner denies it)', ({ over }) => {
    expect(parseControl(message(callbackLine(over)))).toMatchObject({ kind: 'hook_callback', requestId: recordedRequest.request_id, call: undefined })
  })

  it.each([
    {
      name: 'initialize success with hooks applied',
      line: { type: 'control_response', response: { subtype: 'success', request_id: INITIALIZE_REQUEST_ID, response: { hooks_applied: true } } },
      out: { kind: 'initialized', ok: true },
    },
    {
      name: 'initialize success without hooks applied',
      line: { type: 'control_response', response: { subtype: 'success', request_id: INITIALIZE_REQUEST_ID, response: {} } },
      out: { kind: 'initialized', ok: false, error: 'it did not report hooks_applied' },
    },
    {
      name: 'initialize error',
      line: { type: 'control_response', response: { subtype: 'error', request_id: INITIALIZE_REQUEST_ID, error: 'nope' } },
      out: { kind: 'initialized', ok: false, error: 'nope' },
    },
    {
      name: 'an interrupt answer',
      line: { type: 'control_response', response: { subtype: 'success', request_id: 'interrupt-1', response: {} } },
      out: { kind: 'other' },
    },
    { name: 'a cancel request', line: { type: 'control_cancel_request', request_id: 'x' }, out: { kind: 'cancel', requestId: 'x' } },
    { name: 'a cancel request without an id', line: { type: 'control_cancel_request' }, out: { kind: 'other' } },
    {
      name: 'a permission request with nothing in it',
      line: { type: 'control_request', request_id: 'r9', request: { subtype: 'can_use_tool' } },
      out: { kind: 'can_use_tool', requestId: 'r9', call: { toolName: '', input: {} } },
    },
    {
      name: 'an AskUserQuestion with malformed questions is a permission request',
      line: { type: 'control_request', request_id: 'r8', request: { subtype: 'can_use_tool', tool_name: 'AskUserQuestion', input: { questions: 'x' } } },
      out: { kind: 'can_use_tool', requestId: 'r8', call: { toolName: 'AskUserQuestion', input: { questions: 'x' } } },
    },
    { name: 'a request without an id', line: { type: 'control_request', request: { subtype: 'hook_callback' } }, out: undefined },
  ])('parse - $name', ({ line, out }) => {
    expect(parseControl(line)).toEqual(out)
  })

  it('routing - every line of a control type goes to the gate, parsed, and makes no output; an event that mentions one is an event', () => {
    const handed: unknown[] = []
    const lines = [
      callbackLine(),
      JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: 'interrupt-1', response: {} } }),
      JSON.stringify({ type: 'control_cancel_request', request_id: 'x' }),
      '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"about \\"control_request\\""}]}}',
    ]
    const outputs = lines.flatMap((line) => parseClaudeLine(line, (msg) => handed.push(msg)))
    expect(handed).toEqual(lines.slice(0, 3).map(message))
    expect(outputs).toEqual([{ kind: 'text', text: 'about "control_request"', messageId: 'm1' }])
    // Without a gate the control lines still make no output.
    expect(lines.slice(0, 3).flatMap((line) => parseClaudeLine(line))).toEqual([])
  })

  it('routing - a gate that throws is not taken for a noisy line: the error reaches the engine', () => {
    expect(() =>
      parseClaudeLine(callbackLine(), () => {
        throw new Error('gate broke')
      }),
    ).toThrow('gate broke')
  })

  it.each<{ name: string; decision: unknown; response: unknown }>([
    { name: "allow: no objection, so the CLI's own rules still apply", decision: { decision: 'allow' }, response: {} },
    {
      name: 'deny with the reason',
      decision: { decision: 'deny', reason: 'blocked by WAF rule x' },
      response: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'blocked by WAF rule x' } },
    },
    {
      name: 'no decision denies',
      decision: undefined,
      response: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: UNCHECKED } },
    },
    {
      name: 'an unknown decision denies',
      decision: { decision: 'maybe' },
      response: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: UNCHECKED } },
    },
    {
      name: 'a deny without a reason still denies',
      decision: { decision: 'deny' },
      response: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: UNCHECKED } },
    },
  ])('answer - $name', ({ decision, response }) => {
    expect(JSON.parse(hookAnswerLine('req-1', decision as ToolDecision))).toEqual({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'req-1', response },
    })
  })

  it('answer - a request the runner does not serve gets an error answer', () => {
    expect(answerOf(unsupportedAnswerLine('r9', 'can_use_tool'))).toEqual({
      subtype: 'error',
      request_id: 'r9',
      error: 'Unsupported control request: can_use_tool',
    })
  })
})

describe('claude control - the tool gate of one CLI process', () => {
  const initialized = (ok = true) =>
    JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: INITIALIZE_REQUEST_ID, response: { hooks_applied: ok } } })
  const session = (check: ToolGate['check']) => {
    const written: string[] = []
    const refused: string[] = []
    const gate = new ToolGateSession(
      { gate: { check, timeoutSeconds: 7 } },
      (line) => written.push(line),
      (why) => refused.push(why),
    )
    return { gate, written, refused }
  }

  it('gate - sends initialize first and holds prompts until the CLI applied the hook', () => {
    const { gate, written } = session(() => ({ decision: 'allow' }))
    expect(JSON.parse(written[0]!).request.hooks.PreToolUse[0].timeout).toBe(7)
    gate.afterInitialize('prompt 1\n')
    expect(written).toHaveLength(1)
    gate.handle(message(initialized()))
    gate.afterInitialize('prompt 2\n')
    expect(written.slice(1)).toEqual(['prompt 1\n', 'prompt 2\n'])
  })

  it('gate - a CLI that does not apply the hook is refused; held prompts are never written', () => {
    const { gate, written, refused } = session(() => ({ decision: 'allow' }))
    gate.afterInitialize('prompt\n')
    gate.handle(message(initialized(false)))
    expect(written).toHaveLength(1)
    expect(refused).toEqual([expect.stringContaining("refused the runner's tool hook")])
  })

  it('gate - answers each hook_callback on the same tick with the decision', () => {
    const calls: unknown[] = []
    const { gate, written } = session((call) => {
      calls.push(call)
      return { decision: 'deny', reason: 'no' }
    })
    gate.handle(message(callbackLine()))
    expect(calls).toEqual([expect.objectContaining({ toolName: 'Bash' })])
    expect(answerOf(written[1]!)).toMatchObject({
      subtype: 'success',
      request_id: recordedRequest.request_id,
      response: { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no' } },
    })
  })

  it.each<{ name: string; check: ToolGate['check'] }>([
    {
      name: 'a check that throws',
      check: () => {
        throw new Error('boom')
      },
    },
    { name: 'a check that rejects', check: () => Promise.reject(new Error('boom')) },
  ])('gate - $name denies the call', async ({ check }) => {
    const { gate, written } = session(check)
    gate.handle(message(callbackLine()))
    await new Promise((resolve) => setImmediate(resolve))
    expect(answerOf(written[1]!).response.hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/could not check this tool call, so it was not run: the check failed \(boom\)/),
    })
  })

  it('gate - a callback that names no tool is denied without asking', () => {
    let asked = false
    const { gate, written } = session(() => {
      asked = true
      return { decision: 'allow' }
    })
    gate.handle(message(callbackLine({ callback_id: 'other' })))
    expect(asked).toBe(false)
    expect(answerOf(written[1]!).response.hookSpecificOutput.permissionDecision).toBe('deny')
  })
})
