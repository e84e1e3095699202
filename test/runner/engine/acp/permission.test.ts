import { describe, expect, it } from 'vitest'
import type { ToolGate } from '../../../../waf/mod.ts'
import type { AcpToolCall } from '../../../../runner/engine/acp/map.ts'
import { decidePermission, isRejection } from '../../../../runner/engine/acp/permission.ts'
import type { Approver, PermissionAnswer } from '../../../../runner/engine/approver.ts'
import { until } from '../../../fixtures/until.ts'

/** The options each agent offered (recordings): Gemini, claude-code-acp, codex-acp. */
const GEMINI = [
  { optionId: 'proceed_always', name: 'Allow for this session', kind: 'allow_always' },
  { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
]
const CLAUDE = [
  { kind: 'allow_always', name: 'Always Allow', optionId: 'allow_always' },
  { kind: 'allow_once', name: 'Allow', optionId: 'allow' },
  { kind: 'reject_once', name: 'Reject', optionId: 'reject' },
]
const CODEX = [
  { optionId: 'approved', name: 'Yes, proceed', kind: 'allow_once' },
  // Offered for a command its rules make ask (acp/permission-answers.json): a lasting execpolicy rule.
  { optionId: 'approved-execpolicy-amendment', name: "Yes, and don't ask again for commands that start with `touch first`", kind: 'allow_always' },
  { optionId: 'abort', name: 'No, and tell Codex what to do differently', kind: 'reject_once' },
]
/** Each agent's options with the ids of its allow-once and reject-once options. */
const AGENTS = [
  { agent: 'gemini', options: GEMINI, allow: 'proceed_once', reject: 'cancel' },
  { agent: 'claude-code-acp', options: CLAUDE, allow: 'allow', reject: 'reject' },
  { agent: 'codex-acp', options: CODEX, allow: 'approved', reject: 'abort' },
]
const CALL: AcpToolCall = { id: 't1', name: 'Bash', input: { command: 'echo hi' }, command: 'echo hi' }
const gate = (check: ToolGate['check'], timeoutSeconds = 5): ToolGate => ({ check, timeoutSeconds })
const ask = (options: unknown[], g: ToolGate | undefined, call: AcpToolCall | null = CALL) =>
  decidePermission({ params: { sessionId: 's', toolCall: {}, options }, call: call ?? undefined, cwd: '/w', gate: g, waitCancel: () => {}, done: () => {} })

describe('acp permission - the WAF decides', () => {
  it.each(AGENTS)('$agent: allow → the allow-once option (never "always"), deny → the reject option', async ({ options, allow, reject }) => {
    await expect(
      ask(
        options,
        gate(() => ({ decision: 'allow' })),
      ),
    ).resolves.toEqual({ outcome: { outcome: 'selected', optionId: allow } })
    await expect(
      ask(
        options,
        gate(() => ({ decision: 'deny', reason: 'no' })),
      ),
    ).resolves.toEqual({ outcome: { outcome: 'selected', optionId: reject } })
  })

  it('the gate sees the call as the WAF reads it, with the cwd', async () => {
    const seen: unknown[] = []
    await ask(
      CLAUDE,
      gate((call) => {
        seen.push(call)
        return { decision: 'allow' }
      }),
    )
    expect(seen).toEqual([{ toolName: 'Bash', input: { command: 'echo hi' }, toolUseId: 't1', cwd: '/w' }])
  })

  it.each([
    {
      name: 'a throw',
      g: gate(() => {
        throw new Error('boom')
      }),
    },
    { name: 'a rejected promise', g: gate(() => Promise.reject(new Error('boom'))) },
    { name: 'no answer in time', g: gate(() => new Promise(() => {}), 0.05) },
    { name: 'a malformed decision', g: gate(() => ({ decision: 'maybe' }) as never) },
  ])('fails closed on $name', async ({ g }) => {
    await expect(ask(CLAUDE, g)).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'reject' } })
  })

  it('a request naming no tool call is rejected; without a reject option the answer is cancelled', async () => {
    await expect(
      ask(
        CLAUDE,
        gate(() => ({ decision: 'allow' })),
        null,
      ),
    ).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'reject' } })
    await expect(
      ask(
        [{ optionId: 'ok', kind: 'allow_once' }],
        gate(() => ({ decision: 'deny', reason: 'x' })),
      ),
    ).resolves.toEqual({ outcome: { outcome: 'cancelled' } })
  })

  it('without a gate (WAF off) the call is allowed once', async () => {
    await expect(ask(GEMINI, undefined)).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'proceed_once' } })
  })

  it('a cancelled turn answers a waiting request cancelled', async () => {
    let cancel: ((o: { outcome: 'cancelled' }) => void) | undefined
    const answer = decidePermission({
      params: { options: CLAUDE },
      call: CALL,
      cwd: '/w',
      gate: gate(() => new Promise(() => {})),
      waitCancel: (a) => (cancel = a),
      done: () => {},
    })
    cancel?.({ outcome: 'cancelled' })
    await expect(answer).resolves.toEqual({ outcome: { outcome: 'cancelled' } })
  })
})

/** An approver that answers every ask with `answer` and records what it was asked. */
function approver(answer: PermissionAnswer | (() => Promise<PermissionAnswer>), asked: { call: unknown; signal?: AbortSignal | undefined }[] = []): Approver {
  return {
    permission: (ask, signal) => {
      asked.push({ call: ask.call, signal })
      return typeof answer === 'function' ? answer() : Promise.resolve(answer)
    },
    question: () => Promise.reject(new Error('ACP agents ask no questions')),
  }
}
const ALLOW: PermissionAnswer = { behavior: 'allow', input: {} }
const DENY: PermissionAnswer = { behavior: 'deny', message: 'not that file' }
const askPerson = (options: unknown[], g: ToolGate | undefined, a: Approver, waitCancel: (answer: (o: { outcome: 'cancelled' }) => void) => void = () => {}) =>
  decidePermission({ params: { sessionId: 's', toolCall: {}, options }, call: CALL, cwd: '/w', gate: g, approver: a, waitCancel, done: () => {} })

describe('acp permission - the WAF, then a person (approval: ask)', () => {
  it.each(AGENTS)(
    "$agent: the person's allow → the allow-once option (the desk keeps 'always'), deny → the reject option",
    async ({ options, allow, reject }) => {
      const waf = gate(() => ({ decision: 'allow' }))
      await expect(askPerson(options, waf, approver(ALLOW))).resolves.toEqual({ outcome: { outcome: 'selected', optionId: allow } })
      await expect(askPerson(options, waf, approver(DENY))).resolves.toEqual({ outcome: { outcome: 'selected', optionId: reject } })
    },
  )

  it('a WAF deny is never put to the person', async () => {
    const asked: { call: unknown }[] = []
    await expect(
      askPerson(
        CLAUDE,
        gate(() => ({ decision: 'deny', reason: 'no' })),
        approver(ALLOW, asked),
      ),
    ).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'reject' } })
    expect(asked).toEqual([])
  })

  it('the person is asked about the call under Claude Code’s name, so approval rules read every agent alike', async () => {
    const asked: { call: unknown }[] = []
    const gemini: AcpToolCall = { id: 'run_shell_command__1', name: 'run_shell_command', input: { command: 'git status' }, command: 'git status' }
    await decidePermission({
      params: { options: GEMINI },
      call: gemini,
      cwd: '/w',
      gate: undefined,
      approver: approver(ALLOW, asked),
      waitCancel: () => {},
      done: () => {},
    })
    expect(asked.map((a) => a.call)).toEqual([{ toolName: 'Bash', input: { command: 'git status' }, toolUseId: 'run_shell_command__1', cwd: '/w' }])
  })

  it('an approver that fails is a reject', async () => {
    await expect(
      askPerson(
        CLAUDE,
        undefined,
        approver(() => Promise.reject(new Error('gone'))),
      ),
    ).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'reject' } })
  })

  it("a cancelled turn answers cancelled and withdraws the person's ask", async () => {
    let cancel: ((o: { outcome: 'cancelled' }) => void) | undefined
    const asked: { call: unknown; signal?: AbortSignal | undefined }[] = []
    const answer = askPerson(
      CLAUDE,
      undefined,
      approver(() => new Promise(() => {}), asked),
      (a) => (cancel = a),
    )
    await until(() => asked.length === 1, 'the person was asked')
    cancel?.({ outcome: 'cancelled' })
    await expect(answer).resolves.toEqual({ outcome: { outcome: 'cancelled' } })
    expect(asked[0]?.signal?.aborted).toBe(true)
  })
})

describe('acp permission - which answers reject', () => {
  it.each([
    { options: CODEX, outcome: { outcome: 'selected' as const, optionId: 'abort' }, rejected: true },
    { options: CODEX, outcome: { outcome: 'selected' as const, optionId: 'approved' }, rejected: false },
    { options: GEMINI, outcome: { outcome: 'selected' as const, optionId: 'cancel' }, rejected: true },
    { options: [{ optionId: 'never', kind: 'reject_always' }], outcome: { outcome: 'selected' as const, optionId: 'never' }, rejected: true },
    { options: CLAUDE, outcome: { outcome: 'cancelled' as const }, rejected: false },
  ])('$outcome.outcome $outcome.optionId → $rejected', ({ options, outcome, rejected }) => {
    expect(isRejection({ options }, outcome)).toBe(rejected)
  })
})
