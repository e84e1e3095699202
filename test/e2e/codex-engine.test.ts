import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CodexEngine } from '../../runner/engine/codex/engine.ts'
import type { EngineStartOptions } from '../../runner/engine/engine.ts'
import type { ToolCall, ToolGate } from '../../waf/mod.ts'
import { SESSION_TAG_VAR } from '../../runner/process/env.ts'
import { killProcessGroup } from '../../runner/process/terminate.ts'
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.ts'
import { b64, denyRmRf, engineScratch, RM_RF_DENIED, taggedProcesses } from '../fixtures/engine-run.ts'
import { processesUnder } from '../fixtures/processes.ts'
import { codexBin, fakeProviderArgs } from './engines/codex.ts'

describe('codex engine - the real Codex CLI over app-server against the fake Responses API', () => {
  let api: FakeResponses
  const engine = (args: string[] = []) =>
    new CodexEngine({ command: codexBin, args: [...fakeProviderArgs(api.url), ...args], model: 'gpt-5.5', maxLineBytes: 1 << 20 })
  const scratch = engineScratch('codex-engine-')

  beforeAll(async () => {
    api = await startFakeResponses()
  })
  afterAll(async () => {
    await api?.stop()
  })

  async function start(name: string, extra: Partial<EngineStartOptions> = {}, args?: string[]) {
    const session = await scratch.session(name, `codex-test-${name}`, (home) => ({ HOME: home, FAKE_OPENAI_API_KEY: 'k' }))
    const options: EngineStartOptions = { ...session.options, ...extra }
    const run = await scratch.start(engine(args), options)
    return { ...session, run, options }
  }

  it('version - the CLI says codex-cli 0.169.0', async () => {
    expect(await engine().version()).toBe('codex-cli 0.169.0')
  })

  it('tool round trip - thinking, tool_use of the shell, its output, the answer, a result with tokens; exits on end of input', async () => {
    const { run } = await start('round-trip')
    const { outputs, result } = await run.turn('run: echo conformance-ok')
    const kinds = outputs.filter((o) => !o.kind.endsWith('_delta')).map((o) => o.kind)
    expect(kinds).toEqual(['init', 'thinking', 'text', 'tool_use', 'tool_result', 'text', 'result'])
    expect(outputs.find((o) => o.kind === 'init')).toMatchObject({ cliSessionId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(outputs.find((o) => o.kind === 'tool_use')).toMatchObject({ name: 'Bash', input: { command: 'echo conformance-ok' } })
    expect(outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ content: 'conformance-ok\n', isError: false })
    expect(result).toMatchObject({ isError: false, subtype: 'success', numTurns: 2, cumulativeCostUsd: 0 })
    expect(result?.text).toMatch(/^Done\. The tool said: .*conformance-ok/s)
    expect(result?.inputTokens).toBeGreaterThan(0)
    expect(result?.outputTokens).toBeGreaterThan(0)
    run.process.endInput()
    expect(await run.process.exited).toMatchObject({ code: 0 })
  })

  it('session tag - commands Codex runs keep the tag even with shell_environment_policy inherit = none', async () => {
    const { run, tag } = await start('tag', {}, ['-c', 'shell_environment_policy.inherit="none"'])
    const { outputs } = await run.turn(`run: echo tag=$${SESSION_TAG_VAR}`)
    // With no variables inherited, Codex's login shell complains about its profile on stderr first (in either order): the tag is the output's own line.
    const content = (outputs.find((o) => o.kind === 'tool_result') as { content?: string } | undefined)?.content ?? ''
    expect(content.split('\n')).toContain(`tag=${tag}`)
    run.process.endInput()
    await run.process.exited
  })

  it('stop mid-tool - interrupt ends the turn with one failed result; after end of input no process is left', async () => {
    const { run, cwd, tag } = await start('stop')
    const toolUse = run.next((o) => o.kind === 'tool_use')
    const result = run.next((o) => o.kind === 'result')
    run.process.send('run: python3 -c "import time; time.sleep(30)"')
    await toolUse
    run.process.interrupt()
    const end = await result
    expect(end).toMatchObject({ kind: 'result', result: { isError: true, subtype: 'error_during_execution' } })
    run.process.endInput()
    await run.process.exited
    expect(run.outputs.filter((o) => o.kind === 'result')).toHaveLength(1)
    expect(await processesUnder(cwd)).toEqual([])
    expect(await taggedProcesses(tag)).toEqual([])
  })

  it('resume after the CLI is killed - a new process resumes the thread from its own store', async () => {
    const first = await start('resume')
    const { outputs } = await first.run.turn('remember the word pelican')
    const init = outputs.find((o) => o.kind === 'init')
    const threadId = init?.kind === 'init' ? init.cliSessionId : undefined
    expect(threadId).toBeDefined()
    killProcessGroup(first.run.process.pid)
    await first.run.process.exited

    const run = await scratch.start(engine(), { ...first.options, resume: true, conversationId: threadId })
    const { outputs: again, result } = await run.turn('recall')
    expect(again.find((o) => o.kind === 'init')).toMatchObject({ cliSessionId: threadId })
    expect(result?.text).toBe('Earlier prompts: remember the word pelican')
    run.process.endInput()
    await run.process.exited
  })

  it('resume of a thread Codex does not have - the turn fails with conversationNotFound', async () => {
    const { run } = await start('resume-missing', { resume: true, conversationId: '01a20000-0000-7000-8000-000000000000' })
    const { result } = await run.turn('recall')
    expect(result).toMatchObject({ isError: true, conversationNotFound: true })
    run.process.endInput()
    await run.process.exited
  })

  describe('tool gate (the WAF at the tool call)', () => {
    it('a denied call never runs, and the model is told why', async () => {
      const calls: ToolCall[] = []
      const { run, cwd } = await start('waf-deny', { toolGate: denyRmRf(calls) })
      const canary = path.join(cwd, 'CANARY')
      const { outputs, result } = await run.turn(`run-b64: ${b64(`touch ${canary}; exit 0; rm -rf /`)}`)
      expect(calls[0]).toMatchObject({ toolName: 'Bash', input: { command: `touch ${canary}; exit 0; rm -rf /` }, toolUseId: expect.any(String) })
      expect(existsSync(canary)).toBe(false)
      expect(outputs.some((o) => o.kind === 'tool_result')).toBe(false)
      expect(api.saw(RM_RF_DENIED)).toBe(true)
      expect(result).toMatchObject({ isError: false })
      run.process.endInput()
      await run.process.exited
    })

    it('an allowed call runs', async () => {
      const calls: ToolCall[] = []
      const { run } = await start('waf-allow', { toolGate: denyRmRf(calls) })
      const { outputs } = await run.turn('run: echo allowed-ok')
      expect(calls).toHaveLength(1)
      expect(outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ content: 'allowed-ok\n' })
      run.process.endInput()
      await run.process.exited
    })

    it('fail-closed - a gate that throws keeps the call from running', async () => {
      const gate: ToolGate = {
        timeoutSeconds: 10,
        check: () => {
          throw new Error('boom')
        },
      }
      const { run, cwd } = await start('waf-throw', { toolGate: gate })
      const canary = path.join(cwd, 'CANARY')
      await run.turn(`run: touch ${canary}`)
      expect(existsSync(canary)).toBe(false)
      expect(api.saw('the check failed (boom)')).toBe(true)
      run.process.endInput()
      await run.process.exited
    })
  })
})
