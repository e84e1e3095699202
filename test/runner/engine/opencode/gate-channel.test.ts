import { duplexPair } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { ToolCall, ToolGate } from '../../../../waf/mod.ts'
import type { Approver } from '../../../../runner/engine/approver.ts'
import { answerLine, GateChannel, parseGateLine, type AnnouncedCall } from '../../../../runner/engine/opencode/gate-channel.ts'
import { SteeringDesk } from '../../../../runner/steering/desk.ts'
import { parseApprovalRule } from '../../../../runner/steering/rules.ts'
import type { EventDraft } from '../../../../runner/event-draft.ts'

/** A channel with the plugin's end in the test's hands. */
function channel(gate: ToolGate | undefined, approver?: Approver) {
  const [runner, plugin] = duplexPair()
  const calls: AnnouncedCall[] = []
  const gateChannel = new GateChannel({ gate, approver, socket: runner, cwd: '/work', onCall: (call) => calls.push(call) })
  const answers: unknown[] = []
  let buffered = ''
  plugin.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      answers.push(JSON.parse(buffered.slice(0, end)))
      buffered = buffered.slice(end + 1)
    }
  })
  const check = (id: number, tool: string, args: unknown) => plugin.write(`${JSON.stringify({ type: 'check', id, tool, callID: `call_${id}`, args })}\n`)
  const answerTo = async (id: number) => {
    await expect.poll(() => answers.some((a) => (a as { id: number }).id === id)).toBe(true)
    return answers.find((a) => (a as { id: number }).id === id)
  }
  const ask = async (id: number, tool: string, args: unknown) => {
    check(id, tool, args)
    return answerTo(id)
  }
  return { gateChannel, runner, plugin, calls, answers, check, answerTo, ask }
}

/** The session's real steering desk, with the operator's rules; its events kept. */
function desk(rules: { allow?: string[]; deny?: string[] } = {}) {
  const events: EventDraft[] = []
  const d = new SteeringDesk({
    policy: { mode: 'ask', timeoutMs: 60_000, allow: (rules.allow ?? []).map(parseApprovalRule), deny: (rules.deny ?? []).map(parseApprovalRule) },
    emit: (draft) => events.push(draft),
  })
  const requested = async () => {
    await expect.poll(() => d.pending().permissions.length).toBe(1)
    return d.pending().permissions[0]!
  }
  return { d, events, requested }
}

const allowAll: ToolGate = { timeoutSeconds: 5, check: () => ({ decision: 'allow' }) }

describe('opencode gate-channel - the runner end of the gate plugin', () => {
  it.each([
    { line: '{"type":"ready"}', message: { kind: 'ready' } },
    {
      line: '{"type":"check","id":3,"tool":"bash","callID":"c","args":{"command":"ls"}}',
      message: { kind: 'check', id: 3, tool: 'bash', callId: 'c', args: { command: 'ls' } },
    },
    { line: '{"type":"check","id":"3","tool":"bash"}', message: { kind: 'invalid', line: '{"type":"check","id":"3","tool":"bash"}' } },
    { line: 'nope', message: { kind: 'invalid', line: 'nope' } },
  ])('parseGateLine $line', ({ line, message }) => {
    expect(parseGateLine(line)).toEqual(message)
  })

  it('answerLine', () => {
    expect(answerLine(1, { decision: 'allow' })).toBe('{"id":1,"allow":true}\n')
    expect(answerLine(2, { decision: 'deny', reason: 'no' })).toBe('{"id":2,"allow":false,"reason":"no"}\n')
  })

  it('ready resolves when the plugin says so; each call is announced and decided by the gate with the WAF view', async () => {
    const seen: ToolCall[] = []
    const { gateChannel, plugin, calls, ask } = channel({
      timeoutSeconds: 5,
      check: (call) => {
        seen.push(call)
        return call.toolName === 'Bash' ? { decision: 'deny', reason: 'no shell' } : { decision: 'allow' }
      },
    })
    plugin.write('{"type":"ready"}\n')
    await gateChannel.ready
    expect(await ask(1, 'bash', { command: 'rm -rf /' })).toEqual({ id: 1, allow: false, reason: 'no shell' })
    expect(await ask(2, 'read', { filePath: '/a' })).toEqual({ id: 2, allow: true })
    expect(calls).toEqual([
      { callId: 'call_1', tool: 'bash', args: { command: 'rm -rf /' } },
      { callId: 'call_2', tool: 'read', args: { filePath: '/a' } },
    ])
    expect(seen[0]).toEqual({ toolName: 'Bash', input: { command: 'rm -rf /', description: undefined }, cwd: '/work', toolUseId: 'call_1' })
  })

  it.each([
    {
      name: 'a throw',
      gate: {
        timeoutSeconds: 5,
        check: () => {
          throw new Error('boom')
        },
      },
      reason: /the check failed: boom/,
    },
    { name: 'a rejection', gate: { timeoutSeconds: 5, check: () => Promise.reject(new Error('nope')) }, reason: /the check failed: nope/ },
    { name: 'no answer in time', gate: { timeoutSeconds: 0.05, check: () => new Promise<never>(() => {}) }, reason: /no decision within 0.05 s/ },
  ])('fail-closed - $name is a deny with the reason', async ({ gate, reason }) => {
    const { ask } = channel(gate as ToolGate)
    expect(await ask(1, 'bash', { command: 'ls' })).toMatchObject({ id: 1, allow: false, reason: expect.stringMatching(reason) })
  })

  it('without a gate every call may run (and is still announced)', async () => {
    const { ask, calls } = channel(undefined)
    expect(await ask(1, 'bash', { command: 'ls' })).toEqual({ id: 1, allow: true })
    expect(calls).toHaveLength(1)
  })

  it('approver - a call the gate allowed waits for the person; allow runs it, deny sends the message as the reason', async () => {
    const { d, requested } = desk()
    const { check, answerTo, answers } = channel(allowAll, d)
    check(1, 'bash', { command: 'touch canary', description: 'd' })
    const request = await requested()
    expect(request).toMatchObject({ tool: { id: 'call_1', name: 'Bash', input: { command: 'touch canary' } }, title: expect.stringContaining('touch canary') })
    expect(answers).toEqual([])
    d.reply({ kind: 'permission', id: request.id, decision: 'allow_once' })
    expect(await answerTo(1)).toEqual({ id: 1, allow: true })
    check(2, 'write', { filePath: '/work/a', content: 'x' })
    const second = await requested()
    expect(second.tool).toMatchObject({ name: 'Write', input: { file_path: '/work/a' } })
    d.reply({ kind: 'permission', id: second.id, decision: 'deny', message: 'not that file' })
    expect(await answerTo(2)).toEqual({ id: 2, allow: false, reason: 'The user denied this tool call: not that file' })
  })

  it('approver - reads and searches run without asking', async () => {
    const { d, events } = desk()
    const { ask } = channel(allowAll, d)
    expect(await ask(1, 'read', { filePath: '/work/a' })).toEqual({ id: 1, allow: true })
    expect(await ask(2, 'grep', { pattern: 'x' })).toEqual({ id: 2, allow: true })
    expect(events).toEqual([])
  })

  it('approver - the WAF decides first: its deny is never asked about', async () => {
    const { d, events } = desk()
    const { ask } = channel({ timeoutSeconds: 5, check: () => ({ decision: 'deny', reason: 'no shell' }) }, d)
    expect(await ask(1, 'bash', { command: 'ls' })).toEqual({ id: 1, allow: false, reason: 'no shell' })
    expect(events).toEqual([])
  })

  it.each([
    {
      name: 'approval_allow Bash(git status*) runs git status',
      rules: { allow: ['Bash(git status*)'] },
      tool: 'bash',
      args: { command: 'git status --short' },
      answer: { allow: true },
    },
    {
      name: 'approval_deny Bash(rm *) denies rm',
      rules: { deny: ['Bash(rm *)'] },
      tool: 'bash',
      args: { command: 'rm -rf build' },
      answer: { allow: false, reason: expect.stringContaining('Bash(rm *)') },
    },
    {
      name: 'approval_allow Edit(src/**) runs an edit under src',
      rules: { allow: ['Edit(src/**)'] },
      tool: 'edit',
      args: { filePath: 'src/a.ts', oldString: 'a', newString: 'b' },
      answer: { allow: true },
    },
  ])('approver - rules read OpenCode calls as Claude Code names them: $name', async ({ rules, tool, args, answer }) => {
    const { d, events } = desk(rules)
    const { ask } = channel(allowAll, d)
    expect(await ask(1, tool, args)).toEqual({ id: 1, ...answer })
    expect(events).toEqual([expect.objectContaining({ event: 'permission_resolved', source: 'rule' })])
  })

  it('approver - a channel that closes withdraws the waiting ask (the turn ended)', async () => {
    const { d, events, requested } = desk()
    const { check, runner } = channel(allowAll, d)
    check(1, 'bash', { command: 'sleep 100' })
    await requested()
    runner.destroy()
    await expect.poll(() => events.find((e) => e.event === 'permission_resolved')).toMatchObject({ decision: 'deny', source: 'turn_ended' })
    expect(d.pending().permissions).toEqual([])
  })

  it('approver - a failing approver is a deny with the reason', async () => {
    const failing: Approver = { permission: () => Promise.reject(new Error('desk gone')), question: () => Promise.reject(new Error('desk gone')) }
    const { ask } = channel(allowAll, failing)
    expect(await ask(1, 'bash', { command: 'ls' })).toMatchObject({ id: 1, allow: false, reason: expect.stringContaining('asking a person failed: desk gone') })
  })
})
