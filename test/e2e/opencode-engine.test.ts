import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EngineOutput, EngineStartOptions } from '../../runner/engine/engine.ts'
import type { ToolCall, ToolGate } from '../../waf/mod.ts'
import { OpenCodeEngine } from '../../runner/engine/opencode/engine.ts'
import { killProcessGroup } from '../../runner/process/terminate.ts'
import { SteeringDesk } from '../../runner/steering/desk.ts'
import type { EventDraft } from '../../runner/event-draft.ts'
import { SessionSandbox } from '../../runner/sandbox-exec/mod.ts'
import { startFakeChat, type FakeChat } from '../fakes/openai-chat.ts'
import { b64, denyRmRf, engineScratch, RM_RF_DENIED, taggedProcesses } from '../fixtures/engine-run.ts'
import { requireBwrap } from '../fixtures/escape-corpus.ts'
import { processesUnder } from '../fixtures/processes.ts'
import { opencodeCli } from '../fixtures/opencode-cli.ts'
import { FAKE_MODEL, opencodeEnv } from './engines/opencode.ts'

const kinds = (outputs: EngineOutput[]) => outputs.filter((o) => !o.kind.endsWith('_delta')).map((o) => o.kind)

/**
 * The real OpenCode CLI (1.18.33, `opencode run --format json`, a process per
 * turn) through the Engine interface against the fake Chat Completions API,
 * without a sandbox and in the session sandbox (bubblewrap, network allowlist).
 */
describe.each([{ sandboxed: false }, { sandboxed: true }])(
  'opencode engine - real CLI against the fake Chat Completions API (sandboxed: $sandboxed)',
  ({ sandboxed }) => {
    if (sandboxed) requireBwrap()
    let api: FakeChat
    /** The real CLI, installed into .tools/ on first use (test/fixtures/opencode-cli.ts says why not as a dev dependency). */
    let opencodeBin: string
    const engine = () => new OpenCodeEngine({ command: opencodeBin, args: [], model: FAKE_MODEL, maxLineBytes: 1 << 20 })
    const scratch = engineScratch('opencode-engine-')

    beforeAll(async () => {
      opencodeBin = await opencodeCli()
      api = await startFakeChat()
    })
    afterAll(async () => {
      await api?.stop()
    })

    async function start(name: string, extra: Partial<EngineStartOptions> = {}) {
      const session = await scratch.session(name, `opencode-test-${name}-${sandboxed}`, (home) => opencodeEnv(api.url, home))
      const { cwd } = session
      let env = session.options.env
      let wrap: EngineStartOptions['wrap']
      if (sandboxed) {
        const { HOME: _home, ...engineEnv } = env
        const sandbox = new SessionSandbox({
          mode: 'bwrap',
          forwarder: 'auto',
          command: 'bwrap',
          stateDir: path.join(path.dirname(cwd), 'state'),
          hide: [],
          network: 'allowlist',
          networkAllow: [new URL(api.url).host],
          engineEnv,
          engineCommand: opencodeBin,
          engineArgs: [],
        })
        const launch = await sandbox.prepare({ key: 'conversation', workDir: cwd, env: engineEnv })
        env = launch.env
        wrap = launch.wrap
      }
      const options: EngineStartOptions = { ...session.options, env, wrap, ...extra }
      const run = await scratch.start(engine(), options)
      return { ...session, run, options }
    }

    it('version - the CLI says 1.18.33', async () => {
      expect(await engine().version()).toBe('1.18.33')
    })

    it('tool round trip - init, thinking, tool_use of bash (before it runs), its output, the answer, a result with tokens; the next turn continues the conversation', async () => {
      const { run } = await start('round-trip')
      const { outputs, result } = await run.turn('run: echo conformance-ok')
      expect(kinds(outputs)).toEqual(expect.arrayContaining(['init', 'thinking', 'text', 'tool_use', 'tool_result', 'result']))
      expect(outputs.filter((o) => o.kind === 'tool_use')).toHaveLength(1)
      expect(kinds(outputs).indexOf('tool_use')).toBeLessThan(kinds(outputs).indexOf('tool_result'))
      expect(outputs.find((o) => o.kind === 'init')).toMatchObject({ cliSessionId: expect.stringMatching(/^ses_/) })
      expect(outputs.find((o) => o.kind === 'thinking')).toMatchObject({ text: 'The user wants me to run a command. I will use the shell.' })
      expect(outputs.find((o) => o.kind === 'tool_use')).toMatchObject({ name: 'bash', input: { command: 'echo conformance-ok' } })
      expect(outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ content: 'conformance-ok\n', isError: false })
      expect(result).toMatchObject({ isError: false, subtype: 'success', numTurns: 2, cumulativeCostUsd: 0, text: 'Done. The tool said: conformance-ok\n' })
      expect(result?.inputTokens).toBeGreaterThan(0)
      expect(result?.outputTokens).toBeGreaterThan(0)

      const second = await run.turn('recall')
      expect(second.result?.text).toBe('Earlier prompts: run: echo conformance-ok')
      // One conversation: no second init, and the title was asked for once.
      expect(second.outputs.some((o) => o.kind === 'init')).toBe(false)
      expect(api.chatRequests().filter((r) => r.body?.messages?.some((m: { content?: unknown }) => m.content === 'recall')).length).toBeGreaterThan(0)
      run.process.endInput()
      expect(await run.process.exited).toEqual({ code: 0, signal: null })
    })

    it('stop mid-tool - interrupt ends the turn with one failed result; no process of the session is left', async () => {
      const { run, cwd, tag } = await start('stop')
      const toolUse = run.next((o) => o.kind === 'tool_use')
      const result = run.next((o) => o.kind === 'result')
      run.process.send('run: python3 -c "import time; time.sleep(30)"')
      await toolUse
      run.process.interrupt()
      expect(await result).toMatchObject({ kind: 'result', result: { isError: true, subtype: 'error_during_execution' } })
      run.process.endInput()
      await run.process.exited
      expect(run.outputs.filter((o) => o.kind === 'result')).toHaveLength(1)
      expect(await processesUnder(cwd)).toEqual([])
      expect(await taggedProcesses(tag)).toEqual([])
    })

    it('resume after the CLI is killed - a new engine process continues the session from the CLI store', async () => {
      const first = await start('resume')
      await first.run.turn('remember the word pelican')
      const init = first.run.outputs.find((o) => o.kind === 'init')
      const sessionId = init?.kind === 'init' ? init.cliSessionId : undefined
      expect(sessionId).toMatch(/^ses_/)
      // A turn whose CLI is SIGKILLed mid-tool fails; the conversation stays in the CLI's store.
      const toolUse = first.run.next((o) => o.kind === 'tool_use')
      const failed = first.run.next((o) => o.kind === 'result')
      first.run.process.send('run: python3 -c "import time; time.sleep(30)"')
      await toolUse
      for (const pid of await taggedProcesses(first.tag)) killProcessGroup(pid)
      expect(await failed).toMatchObject({ result: { isError: true } })
      first.run.process.endInput()
      await first.run.process.exited

      const run = await scratch.start(engine(), { ...first.options, resume: true, conversationId: sessionId })
      const { result } = await run.turn('recall')
      expect(result?.text).toMatch(/^Earlier prompts: remember the word pelican/)
      run.process.endInput()
      await run.process.exited
    })

    it('resume of a session OpenCode does not have - the turn fails with conversationNotFound', async () => {
      const { run } = await start('resume-missing', { resume: true, conversationId: 'ses_0000000000000000000000000' })
      const { result } = await run.turn('recall')
      expect(result).toMatchObject({ isError: true, conversationNotFound: true })
      run.process.endInput()
      await run.process.exited
    })

    it('WAF - a denied call never runs, the model is told why; an allowed call runs', async () => {
      const calls: ToolCall[] = []
      const { run, cwd } = await start('waf', { toolGate: denyRmRf(calls) })
      const canary = path.join(cwd, 'CANARY')
      const command = `touch ${canary}; exit 0; rm -rf /`
      const { outputs, result } = await run.turn(`run-b64: ${b64(command)}`)
      expect(calls[0]).toMatchObject({ toolName: 'Bash', input: { command }, toolUseId: expect.any(String), cwd })
      expect(existsSync(canary)).toBe(false)
      expect(outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ isError: true, content: RM_RF_DENIED })
      expect(api.saw(RM_RF_DENIED)).toBe(true)
      expect(result).toMatchObject({ isError: false, text: `Done. The tool said: ${RM_RF_DENIED}` })

      const allowed = await run.turn('run: echo allowed-ok')
      expect(calls).toHaveLength(2)
      expect(allowed.outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ content: 'allowed-ok\n', isError: false })
      run.process.endInput()
      await run.process.exited
    })

    it('WAF fail-closed - a gate that throws or never answers keeps the call from running, and the model reads why', async () => {
      const throwing: ToolGate = {
        timeoutSeconds: 10,
        check: () => {
          throw new Error('boom')
        },
      }
      const { run, cwd } = await start('waf-throw', { toolGate: throwing })
      const canary = path.join(cwd, 'CANARY')
      await run.turn(`run: touch ${canary}`)
      expect(existsSync(canary)).toBe(false)
      expect(api.saw('the check failed: boom')).toBe(true)
      run.process.endInput()
      await run.process.exited

      const silent: ToolGate = { timeoutSeconds: 1, check: () => new Promise(() => {}) }
      const mute = await start('waf-silent', { toolGate: silent })
      await mute.run.turn(`run: touch ${canary}`)
      expect(existsSync(canary)).toBe(false)
      expect(api.saw('no decision within 1 s')).toBe(true)
      mute.run.process.endInput()
      await mute.run.process.exited
    })

    it('approval: ask - a stop while a person is asked withdraws the ask (turn_ended); the command never runs, no process is left', async () => {
      const events: EventDraft[] = []
      const desk = new SteeringDesk({ policy: { mode: 'ask', timeoutMs: 60_000, allow: [], deny: [] }, emit: (draft) => events.push(draft) })
      const { run, cwd, tag } = await start('ask-stop', { approver: desk })
      const canary = path.join(cwd, 'CANARY')
      const result = run.next((o) => o.kind === 'result')
      run.process.send(`run: touch ${canary}`)
      await expect.poll(() => desk.pending().permissions.length, { timeout: 60_000 }).toBe(1)
      expect(desk.pending().permissions[0]).toMatchObject({ tool: { name: 'Bash', input: { command: `touch ${canary}` } } })
      run.process.interrupt()
      expect(await result).toMatchObject({ kind: 'result', result: { isError: true } })
      await expect.poll(() => events.find((e) => e.event === 'permission_resolved')).toMatchObject({ decision: 'deny', source: 'turn_ended' })
      run.process.endInput()
      await run.process.exited
      expect(existsSync(canary)).toBe(false)
      expect(await processesUnder(cwd)).toEqual([])
      expect(await taggedProcesses(tag)).toEqual([])
    })
  },
)
