import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SESSION_TAG_VAR } from '../../../runner/process/env.ts'
import { HOOK_TIMEOUT_VAR, WAF_SOCKET_VAR, type HookReply, type HookRequest } from '../../../runner/waf/hook-protocol.ts'
import { WafHookServer } from '../../../runner/waf/hook-server.ts'
import { denyReason, RECORDED_HOOK_INPUT, runHook, scratchHookCommand } from './hook-fixtures.ts'

/** The hook script as the CLI runs it, against a real hook server with a scripted answer. */
describe('waf hook script', () => {
  let server: WafHookServer
  let hook: Awaited<ReturnType<typeof scratchHookCommand>>
  const requests: HookRequest[] = []
  let answer: (request: HookRequest) => HookReply | Promise<HookReply> = () => ({ decision: 'allow' })

  beforeAll(async () => {
    server = await WafHookServer.listen((request) => {
      requests.push(request)
      return answer(request)
    })
    hook = await scratchHookCommand()
  })
  afterAll(async () => {
    await server?.close()
    await hook?.cleanup()
  })

  const env = (extra: Record<string, string> = {}) => ({ [WAF_SOCKET_VAR]: server.socketPath, [SESSION_TAG_VAR]: 'tag-1', ...extra })
  const input = JSON.stringify(RECORDED_HOOK_INPUT)

  it('hook - forwards the CLI input with the session tag; allow is exit 0 and no output', async () => {
    answer = () => ({ decision: 'allow' })
    requests.length = 0
    const run = await runHook(hook.command, input, env())
    expect(run).toMatchObject({ code: 0, stdout: '' })
    expect(requests).toEqual([
      { tag: 'tag-1', tool_name: 'Bash', tool_input: RECORDED_HOOK_INPUT.tool_input, tool_use_id: 'toolu_fake_1', session_id: RECORDED_HOOK_INPUT.session_id, cwd: '/srv/work' },
    ])
  })

  it('hook - deny prints the PreToolUse deny decision with the reason and exits 0', async () => {
    answer = () => ({ decision: 'deny', reason: 'blocked by WAF rule fs.rm-root' })
    const run = await runHook(hook.command, input, env())
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'blocked by WAF rule fs.rm-root' },
    })
  })

  it.each([
    { name: 'the socket is gone', env: () => env({ [WAF_SOCKET_VAR]: `${server.dir}/missing.sock` }), stdin: () => input, reason: /not reachable at .*missing\.sock \(ENOENT\)/ },
    { name: 'no socket variable', env: () => ({ [SESSION_TAG_VAR]: 'tag-1' }), stdin: () => input, reason: /AGENT_RUNTIME_WAF_SOCKET or AGENT_RUNTIME_SESSION_TAG is not set/ },
    { name: 'no session tag', env: () => ({ [WAF_SOCKET_VAR]: server.socketPath }), stdin: () => input, reason: /is not set/ },
    { name: 'input that is not JSON', env: () => env(), stdin: () => '{"tool_name": ', reason: /not JSON/ },
    { name: 'input without a tool', env: () => env(), stdin: () => '{"hook_event_name":"PreToolUse"}', reason: /names no tool/ },
    { name: 'empty input', env: () => env(), stdin: () => '', reason: /not JSON/ },
  ])('hook - fails closed when $name', async ({ env: makeEnv, stdin, reason }) => {
    const run = await runHook(hook.command, stdin(), makeEnv())
    expect(run.code).toBe(0)
    expect(denyReason(run.stdout)).toMatch(/^The agent runtime's WAF could not check this tool call, so it was not run: /)
    expect(denyReason(run.stdout)).toMatch(reason)
  })

  it('hook - fails closed when the runner does not answer in time', async () => {
    answer = () => new Promise<HookReply>(() => {}) // never
    const run = await runHook(hook.command, input, env({ [HOOK_TIMEOUT_VAR]: '300' }))
    expect(denyReason(run.stdout)).toMatch(/did not answer within 300 ms/)
  })

  it('hook - fails closed on a connection closed without an answer, and on a garbled answer', async () => {
    const rude = net.createServer((socket) => socket.once('data', () => socket.end()))
    const garbled = net.createServer((socket) => socket.once('data', () => socket.end('{"decision":"maybe"}\n')))
    const rudePath = `${hook.dir}/rude.sock`
    const garbledPath = `${hook.dir}/garbled.sock`
    await new Promise<void>((resolve) => rude.listen(rudePath, resolve))
    await new Promise<void>((resolve) => garbled.listen(garbledPath, resolve))
    try {
      expect(denyReason((await runHook(hook.command, input, env({ [WAF_SOCKET_VAR]: rudePath }))).stdout)).toMatch(/closed the connection without an answer/)
      expect(denyReason((await runHook(hook.command, input, env({ [WAF_SOCKET_VAR]: garbledPath }))).stdout)).toMatch(/answer the hook does not understand/)
    } finally {
      rude.close()
      garbled.close()
    }
  })

  it('hook - a deleted socket file comes back on the same path', async () => {
    answer = () => ({ decision: 'allow' })
    const { unlink } = await import('node:fs/promises')
    await unlink(server.socketPath)
    expect(denyReason((await runHook(hook.command, input, env())).stdout)).toMatch(/not reachable/)
    await server.ensureListening()
    expect(await runHook(hook.command, input, env())).toMatchObject({ code: 0, stdout: '' })
  })

  it('hook - latency: added time per tool call (sh + node + socket round trip)', async () => {
    answer = () => ({ decision: 'allow' })
    await runHook(hook.command, input, env()) // fills the compile cache
    const times: number[] = []
    for (let i = 0; i < 15; i++) times.push((await runHook(hook.command, input, env())).ms)
    times.sort((a, b) => a - b)
    const p50 = times[Math.floor(times.length / 2)]!
    console.log(`WAF hook latency per tool call over ${times.length} runs: p50 ${p50.toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms`)
    // Generous: Node's start dominates (≈30 ms here); the bound catches a hook that loads far too much.
    expect(p50).toBeLessThan(1_000)
  })
})
