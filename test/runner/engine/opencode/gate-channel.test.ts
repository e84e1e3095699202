import { duplexPair } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { ToolCall, ToolGate } from '../../../../waf/mod.ts'
import { answerLine, GateChannel, parseGateLine, type AnnouncedCall } from '../../../../runner/engine/opencode/gate-channel.ts'

/** A channel with the plugin's end in the test's hands. */
function channel(gate: ToolGate | undefined) {
  const [runner, plugin] = duplexPair()
  const calls: AnnouncedCall[] = []
  const gateChannel = new GateChannel({ gate, socket: runner, cwd: '/work', onCall: (call) => calls.push(call) })
  const answers: unknown[] = []
  let buffered = ''
  plugin.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      answers.push(JSON.parse(buffered.slice(0, end)))
      buffered = buffered.slice(end + 1)
    }
  })
  const ask = async (id: number, tool: string, args: unknown) => {
    plugin.write(`${JSON.stringify({ type: 'check', id, tool, callID: `call_${id}`, args })}\n`)
    await expect.poll(() => answers.some((a) => (a as { id: number }).id === id)).toBe(true)
    return answers.find((a) => (a as { id: number }).id === id)
  }
  return { gateChannel, plugin, calls, ask }
}

describe('opencode gate-channel - the runner end of the gate plugin', () => {
  it.each([
    { line: '{"type":"ready"}', message: { kind: 'ready' } },
    { line: '{"type":"check","id":3,"tool":"bash","callID":"c","args":{"command":"ls"}}', message: { kind: 'check', id: 3, tool: 'bash', callId: 'c', args: { command: 'ls' } } },
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
    const { gateChannel, plugin, calls, ask } = channel({ timeoutSeconds: 5, check: (call) => {
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
    { name: 'a throw', gate: { timeoutSeconds: 5, check: () => { throw new Error('boom') } }, reason: /the check failed: boom/ },
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
})
