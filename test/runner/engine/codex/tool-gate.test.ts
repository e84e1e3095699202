import { connect } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Approver, PermissionAnswer, PermissionAsk } from '../../../../runner/engine/approver.ts'
import { CodexToolGate, decide } from '../../../../runner/engine/codex/tool-gate.ts'
import type { ToolGate } from '../../../../waf/mod.ts'
import { until } from '../../../fixtures/until.ts'

/** A PreToolUse hook's stdin as Codex 0.169.0 writes it for a shell call. */
const HOOK = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'touch canary' }, tool_use_id: 'call_1', cwd: '/w' })
const CALL = { toolName: 'Bash', input: { command: 'touch canary' }, toolUseId: 'call_1', cwd: '/w' }
const waf = (decision: 'allow' | 'deny'): ToolGate => ({
  timeoutSeconds: 5,
  check: () => (decision === 'allow' ? { decision } : { decision, reason: 'WAF: no' }),
})

/** An approver answering `answer`, recording each ask and its signal. */
function person(
  answer: PermissionAnswer | (() => Promise<PermissionAnswer>),
  asked: { ask: PermissionAsk; signal?: AbortSignal | undefined }[] = [],
): Approver {
  return {
    permission: (ask, signal) => {
      asked.push({ ask, signal })
      return typeof answer === 'function' ? answer() : Promise.resolve(answer)
    },
    question: () => Promise.reject(new Error('Codex asks no questions')),
  }
}
const ALLOW: PermissionAnswer = { behavior: 'allow', input: {} }
const DENY: PermissionAnswer = { behavior: 'deny', message: 'The person denied this tool call: not that file' }

describe('codex tool gate - the WAF, then a person', () => {
  it.each([
    { name: 'WAF allows, person allows → allow', gate: waf('allow'), answer: ALLOW, expected: { decision: 'allow' }, asked: 1 },
    {
      name: "WAF allows, person denies → deny with the person's message",
      gate: waf('allow'),
      answer: DENY,
      expected: { decision: 'deny', reason: DENY.message },
      asked: 1,
    },
    { name: 'WAF denies → deny, the person never asked', gate: waf('deny'), answer: ALLOW, expected: { decision: 'deny', reason: 'WAF: no' }, asked: 0 },
    { name: 'no WAF, person allows → allow', gate: undefined, answer: ALLOW, expected: { decision: 'allow' }, asked: 1 },
    {
      name: 'an approver that fails → deny',
      gate: waf('allow'),
      answer: () => Promise.reject(new Error('gone')),
      expected: { decision: 'deny', reason: expect.stringContaining('could not be put to a person (gone)') },
      asked: 1,
    },
  ])('$name', async ({ gate, answer, expected, asked }) => {
    const asks: { ask: PermissionAsk }[] = []
    const { decision } = await decide({ gate, approver: person(answer, asks) }, HOOK)
    expect(decision).toEqual(expected)
    expect(asks.map((a) => a.ask)).toEqual(Array.from({ length: asked }, () => ({ call: CALL })))
  })

  it('without an approver the WAF decides alone', async () => {
    expect((await decide({ gate: waf('allow') }, HOOK)).decision).toEqual({ decision: 'allow' })
  })

  it('a hook request it cannot read is denied, nobody asked', async () => {
    const asks: { ask: PermissionAsk }[] = []
    expect((await decide({ approver: person(ALLOW, asks) }, 'not json')).decision).toMatchObject({ decision: 'deny' })
    expect(asks).toEqual([])
  })

  it('closing the gate (the CLI exited) withdraws the asks still waiting for a person', async () => {
    const asks: { ask: PermissionAsk; signal?: AbortSignal | undefined }[] = []
    const socketPath = path.join(os.tmpdir(), `codex-gate-test-${process.pid}.sock`)
    const gate = await CodexToolGate.listen(socketPath, { approver: person(() => new Promise(() => {}), asks) })
    const socket = connect(socketPath)
    socket.on('error', () => {})
    const ended = new Promise((resolve) => socket.on('close', resolve))
    socket.end(HOOK)
    await until(() => asks.length === 1, 'the person was asked')
    expect(asks[0]?.signal?.aborted).toBe(false)
    await gate.close()
    expect(asks[0]?.signal?.aborted).toBe(true)
    await ended
  })
})
