/**
 * The ACP engine with the three real agents (gemini --acp, claude-code-acp,
 * codex-acp), each against its fake model API (the conformance rows' set-up),
 * driven through the Engine interface as the runner drives it: a tool round
 * trip through the real WAF, stop mid-tool, resume after the agent is
 * killed, a WAF-denied call that never runs; and the round trip again inside
 * the session sandbox (bubblewrap).
 */
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AcpEngine } from '../../../../../runner/engine/acp/engine.ts'
import type { EngineOutput, EngineProcess, EngineStartOptions, TurnResult } from '../../../../../runner/engine/engine.ts'
import { SESSION_TAG_VAR } from '../../../../../runner/process/env.ts'
import { sessionProcesses } from '../../../../../runner/process/tree.ts'
import { SessionSandbox } from '../../../../../runner/sandbox-exec/session-sandbox.ts'
import { RunnerWaf, type ErrorDraft } from '../../../../../waf/guard.ts'
import { WafConfigSchema } from '../../../../../waf/rules.ts'
import { claudeAcpRow } from '../../../engines/claude-acp.ts'
import { codexAcpRow } from '../../../engines/codex-acp.ts'
import { geminiRow } from '../../../engines/gemini.ts'
import type { EngineFixture, EngineRow } from '../../../engines/row.ts'
import { requireBwrap } from '../../../../fixtures/escape-corpus.ts'
import { until } from '../../../../fixtures/until.ts'

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')
const waf = new RunnerWaf({ config: WafConfigSchema.parse({}), log: pino({ level: 'silent' }) })

/** One agent process as the runner holds it: its outputs, the WAF's reports, turn by turn. */
class Agent {
  readonly outputs: EngineOutput[] = []
  readonly blocked: ErrorDraft[] = []
  readonly tag = `acp-test-${randomUUID()}`
  process!: EngineProcess
  #waiting: ((result: TurnResult) => void) | undefined
  #onOutput: ((output: EngineOutput) => void) | undefined

  static async start(fixture: EngineFixture, cwd: string, extra: Partial<EngineStartOptions> & { sandboxed?: boolean } = {}): Promise<Agent> {
    const agent = new Agent()
    const config = fixture.config
    const engine = new AcpEngine({ command: config.command, args: config.args ?? [], maxLineBytes: 1 << 24 })
    let env: Record<string, string> = { ...config.env, [SESSION_TAG_VAR]: agent.tag }
    let wrap: EngineStartOptions['wrap']
    if (extra.sandboxed) {
      const sandbox = new SessionSandbox({
        mode: 'bwrap',
        forwarder: 'auto',
        command: 'bwrap',
        stateDir: mkdtempSync(join(tmpdir(), 'acp-state-')),
        hide: [],
        // The host's network (the fake on loopback): the allowlist knows Claude's base URL variables only.
        network: 'open',
        networkAllow: [],
        engineEnv: config.env ?? {},
        engineCommand: config.command,
        engineArgs: config.args ?? [],
      })
      const launch = await sandbox.prepare({ key: randomUUID(), workDir: cwd, env })
      env = launch.env
      wrap = launch.wrap
    }
    const attachment = waf.forSession(agent.tag).attach((draft) => agent.blocked.push(draft))
    agent.process = await engine.start(
      { cwd, cliSessionId: randomUUID(), resume: false, env, toolGate: attachment.gate, wrap, ...extra },
      {
        onOutput: (output) => {
          agent.outputs.push(output)
          agent.#onOutput?.(output)
          if (output.kind === 'result') agent.#waiting?.(output.result)
        },
        onOverlong: () => {},
        onStderr: () => {},
      },
    )
    return agent
  }

  /** Sends a prompt; resolves with the turn's result. `during` sees each output of the turn. */
  turn(prompt: string, during?: (output: EngineOutput) => void): Promise<TurnResult> {
    const from = this.outputs.length
    return new Promise((resolve) => {
      this.#onOutput = during
      this.#waiting = (result) => {
        this.#waiting = undefined
        this.#onOutput = undefined
        // Exactly one result per turn.
        expect(this.outputs.slice(from).filter((o) => o.kind === 'result')).toHaveLength(1)
        resolve(result)
      }
      this.process.send(prompt)
    })
  }

  of<K extends EngineOutput['kind']>(kind: K): Extract<EngineOutput, { kind: K }>[] {
    return this.outputs.filter((o): o is Extract<EngineOutput, { kind: K }> => o.kind === kind)
  }

  async end(): Promise<void> {
    this.process.endInput()
    await this.process.exited
  }

  /** Processes that still carry this agent's tag (the agent, its tools), polled until none or 10 s; those left then. */
  async leftover(): Promise<number[]> {
    let rows = await sessionProcesses(undefined, SESSION_TAG_VAR, this.tag)
    // Past the deadline the caller sees which are left (its assertion names them), so the timeout is not an error here.
    await until(async () => (rows = await sessionProcesses(undefined, SESSION_TAG_VAR, this.tag)).length === 0, 'no process of the agent', 10_000, 100).catch(
      () => {},
    )
    return rows.map((r) => r.pid)
  }

  /** Resolves once a process of this agent named `name` runs (a tool's command, say); fails after 10 s. */
  running(name: string): Promise<void> {
    return until(
      async () => (await sessionProcesses(undefined, SESSION_TAG_VAR, this.tag)).some((r) => r.name === name),
      `a ${name} process of the agent`,
      10_000,
      20,
    )
  }
}

/**
 * Gemini CLI 0.61.0's session/load does not load: it first starts the session
 * under the same id, which rewrites the stored transcript to a fresh one, then
 * finds nothing resumable there ("No previous sessions found for this
 * project.", a JSON-RPC Internal error).
 */
const LOAD_BROKEN = new Set(['gemini'])

/**
 * claude-code-acp 0.16.2 answers session/prompt before Claude Code has
 * written the turn to its transcript ($HOME/.claude/projects/<cwd>/<id>.jsonl):
 * a SIGKILL at once loses the conversation (no transcript at all, 3 runs of 3;
 * 100 ms later it resumed, 6 of 6). Its row waits until the turn is stored.
 */
async function stored(fixture: EngineFixture, row: string, conversationId: string, text: string): Promise<void> {
  if (row !== 'claude-acp') return
  const projects = join(String(fixture.config.env?.HOME), '.claude', 'projects')
  const holds = (dir: string) => {
    try {
      return readFileSync(join(projects, dir, `${conversationId}.jsonl`), 'utf8').includes(text)
    } catch {
      return false
    }
  }
  await expect.poll(() => existsSync(projects) && readdirSync(projects).some(holds), { timeout: 10_000 }).toBe(true)
}

describe.each<EngineRow>([geminiRow, claudeAcpRow, codexAcpRow])('acp engine - $name', (row) => {
  let fixture: EngineFixture
  const dirs: string[] = []
  const workDir = () => {
    const dir = mkdtempSync(join(tmpdir(), `acp-${row.name}-`))
    dirs.push(dir)
    return dir
  }
  beforeAll(async () => {
    fixture = await row.setup()
  })
  afterAll(async () => {
    await fixture?.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('tool round trip: the WAF allows the shell call, its command in tool_use, the answer, one result', async () => {
    const agent = await Agent.start(fixture, workDir())
    const result = await agent.turn('run: echo conformance-ok')
    const [init] = agent.of('init')
    expect(init?.cliSessionId).toMatch(/\S/)
    const uses = agent.of('tool_use')
    expect(uses).toHaveLength(1)
    expect(uses[0]?.input).toEqual({ command: 'echo conformance-ok' })
    const results = agent.of('tool_result')
    expect(results).toEqual([expect.objectContaining({ toolUseId: uses[0]?.id, isError: false })])
    if (row.shows.toolOutput) expect(results[0]?.content).toContain('conformance-ok')
    if (row.shows.thinking) expect(agent.of('thinking').length).toBeGreaterThan(0)
    expect(result).toMatchObject({ isError: false, subtype: 'success' })
    expect(result.text).toContain('Done. The tool said:')
    expect(result.text).toContain('conformance-ok')
    expect(agent.blocked).toEqual([])
    expect(fixture.modelSaw('conformance-ok')).toBe(true)
    await agent.end()
    expect(await agent.leftover()).toEqual([])
  })

  it("the tool's processes carry the session tag (the runner finds every process of the session by it)", async () => {
    const agent = await Agent.start(fixture, workDir())
    const result = await agent.turn(`run: printenv ${SESSION_TAG_VAR}`)
    expect(result.text).toContain(agent.tag)
    await agent.end()
  })

  it('stop mid-tool: interrupt after tool_use ends the turn as error_during_execution; after endInput no process is left', async () => {
    const agent = await Agent.start(fixture, workDir())
    const result = await agent.turn('run: python3 -c "import time; time.sleep(30)"', (output) => {
      // Once the tool runs (its tool_use was sent, the gate allowed it, and its command started).
      if (output.kind === 'tool_use') void agent.running('python3').then(() => agent.process.interrupt())
    })
    expect(result).toMatchObject({ isError: true, subtype: 'error_during_execution' })
    await agent.end()
    expect(await agent.leftover()).toEqual([])
  })

  it('resume after the agent is killed: session/load of the reported session id', async () => {
    const cwd = workDir()
    const first = await Agent.start(fixture, cwd)
    await first.turn('remember the word pineapple')
    const conversationId = first.of('init')[0]?.cliSessionId
    expect(conversationId).toBeDefined()
    await stored(fixture, row.name, conversationId!, 'remember the word pineapple')
    process.kill(-first.process.pid, 'SIGKILL')
    await first.process.exited
    await first.leftover()

    const second = await Agent.start(fixture, cwd, { resume: true, conversationId })
    const result = await second.turn('recall')
    if (LOAD_BROKEN.has(row.name)) {
      // The runner then starts a new conversation (runner/session/retry.ts).
      expect(result).toMatchObject({ isError: true, conversationNotFound: true })
      expect(result.errors?.[0]).toContain('No previous sessions found')
    } else {
      expect(result.errors).toBeUndefined()
      expect(result.isError).toBe(false)
      expect(result.text).toContain('remember the word pineapple')
      expect(second.of('init')[0]?.cliSessionId).toBe(conversationId)
      // The replayed history is not reported again.
      expect(second.of('text').map((t) => t.text)).toEqual([result.text])
    }
    await second.end()
  })

  it('WAF at the tool call: a denied command never runs, the WAF reports the tool, the turn ends with one result', async () => {
    const cwd = workDir()
    const agent = await Agent.start(fixture, cwd)
    await agent.turn(`run-b64: ${b64('touch CANARY; exit 0; rm -rf /')}`)
    expect(existsSync(join(cwd, 'CANARY'))).toBe(false)
    expect(agent.blocked).toHaveLength(1)
    expect(agent.blocked[0]?.error?.code).toBe('WAF_BLOCKED')
    expect(agent.of('tool_use')[0]?.input).toEqual({ command: 'touch CANARY; exit 0; rm -rf /' })
    await agent.end()
  })

  describe('in the session sandbox (bubblewrap)', () => {
    requireBwrap()
    it('the tool round trip works and nothing is left', async () => {
      const agent = await Agent.start(fixture, workDir(), { sandboxed: true })
      const result = await agent.turn('run: echo sandboxed-ok')
      expect(result).toMatchObject({ isError: false })
      expect(result.text).toContain('sandboxed-ok')
      await agent.end()
      expect(await agent.leftover()).toEqual([])
    })
  })
})
