import { describe, expect, it } from 'vitest'
import type { ToolGate } from '../../../../waf/mod.ts'
import type { AcpToolCall } from '../../../../runner/engine/acp/map.ts'
import { decidePermission } from '../../../../runner/engine/acp/permission.ts'

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
  { optionId: 'abort', name: 'No, and tell Codex what to do differently', kind: 'reject_once' },
]
const CALL: AcpToolCall = { id: 't1', name: 'Bash', input: { command: 'echo hi' }, command: 'echo hi' }
const gate = (check: ToolGate['check'], timeoutSeconds = 5): ToolGate => ({ check, timeoutSeconds })
const ask = (options: unknown[], g: ToolGate | undefined, call: AcpToolCall | null = CALL) =>
  decidePermission({ params: { sessionId: 's', toolCall: {}, options }, call: call ?? undefined, cwd: '/w', gate: g, waitCancel: () => {}, done: () => {} })

describe('acp permission - the WAF decides', () => {
  it.each([
    { agent: 'gemini', options: GEMINI, allow: 'proceed_once', reject: 'cancel' },
    { agent: 'claude-code-acp', options: CLAUDE, allow: 'allow', reject: 'reject' },
    { agent: 'codex-acp', options: CODEX, allow: 'approved', reject: 'abort' },
  ])('$agent: allow → the allow-once option (never "always"), deny → the reject option', async ({ options, allow, reject }) => {
    await expect(ask(options, gate(() => ({ decision: 'allow' })))).resolves.toEqual({ outcome: { outcome: 'selected', optionId: allow } })
    await expect(ask(options, gate(() => ({ decision: 'deny', reason: 'no' })))).resolves.toEqual({ outcome: { outcome: 'selected', optionId: reject } })
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
    { name: 'a throw', g: gate(() => { throw new Error('boom') }) },
    { name: 'a rejected promise', g: gate(() => Promise.reject(new Error('boom'))) },
    { name: 'no answer in time', g: gate(() => new Promise(() => {}), 0.05) },
    { name: 'a malformed decision', g: gate(() => ({ decision: 'maybe' }) as never) },
  ])('fails closed on $name', async ({ g }) => {
    await expect(ask(CLAUDE, g)).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'reject' } })
  })

  it('a request naming no tool call is rejected; without a reject option the answer is cancelled', async () => {
    await expect(ask(CLAUDE, gate(() => ({ decision: 'allow' })), null)).resolves.toEqual({ outcome: { outcome: 'selected', optionId: 'reject' } })
    await expect(ask([{ optionId: 'ok', kind: 'allow_once' }], gate(() => ({ decision: 'deny', reason: 'x' })))).resolves.toEqual({ outcome: { outcome: 'cancelled' } })
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
