/**
 * What the WAF adds to a tool call (issue 12, "WAF at the tool call"): the
 * tool_use → tool_result gap of a harmless Bash call with the WAF on, minus
 * the same gap with the WAF off, in one running session of the in-process dev
 * service (bwrap sandbox where it works). Measured with the Node fake CLI and,
 * when it is installed, the real Claude Code CLI against the fake Anthropic
 * API. Sequential calls, medians. Target: < 2 ms added per call.
 *
 * End to end, the gap is timed in whole milliseconds on the service's event
 * stamps and moves by several ms between runs on a busy machine; the runner's
 * own part — a recorded `hook_callback` line in, the WAF's check, the answer
 * line out (runner/engine/claude/tool-gate.ts) — is also timed on its own,
 * in-process, over many calls.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readFileSync } from 'node:fs'
import pino from 'pino'
import { PRE_TOOL_USE_CALLBACK_ID } from '../runner/engine/claude/control.ts'
import { parseClaudeLine } from '../runner/engine/claude/parse.ts'
import { ToolGateSession } from '../runner/engine/claude/tool-gate.ts'
import { probeBwrap } from '../runner/sandbox-exec/mod.ts'
import { RunnerWaf } from '../waf/guard.ts'
import { WafConfigSchema } from '../waf/rules.ts'
import { resolveConfig } from '../service/config/mod.ts'
import { createLogger } from '../service/logger.ts'
import { startService } from '../service/start.ts'
import { startFakeAnthropic } from '../test/fakes/anthropic-api.ts'
import { claudeBin, claudeEnv } from '../test/fixtures/claude-env.ts'
import { FAKE_CLAUDE } from '../test/fixtures/stack.ts'
import { WsClient } from '../test/fixtures/ws-client.ts'

const FAKE_CALLS = 30
const REAL_CALLS = 20
const GATE_CALLS = 5_000
/** The target for what the WAF adds to one tool call. */
export const WAF_TOOL_CALL_TARGET_MS = 2

/** The runner's own part of one tool call: hook_callback line in, WAF check, answer line out (µs per call, median of 5 rounds). */
export function measureGateMicros(): number {
  const recording = JSON.parse(readFileSync(new URL('../test/fakes/recordings/claude-2.1.330-hook-callbacks.json', import.meta.url), 'utf8'))
  const request = recording.runs[0].transcript.find(
    (entry: { line?: { request?: { subtype?: string } } }) => entry.line?.request?.subtype === 'hook_callback',
  ).line
  const line = JSON.stringify({
    ...request,
    request: {
      ...request.request,
      callback_id: PRE_TOOL_USE_CALLBACK_ID,
      input: { ...request.request.input, tool_input: { command: 'echo hi', description: 'Run command' } },
    },
  })
  const waf = new RunnerWaf({ config: WafConfigSchema.parse({}), log: pino({ level: 'silent' }) })
  let answers = 0
  const gate = new ToolGateSession(
    { gate: waf.forSession('bench').attach(() => {}).gate },
    () => answers++,
    () => {},
  )
  const rounds: number[] = []
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now()
    const onControl = (message: Record<string, unknown>) => gate.handle(message)
    for (let i = 0; i < GATE_CALLS; i++) parseClaudeLine(line, onControl)
    rounds.push(((performance.now() - t0) * 1000) / GATE_CALLS)
  }
  if (answers !== 1 + 5 * GATE_CALLS) throw new Error(`expected one answer per call, got ${answers - 1}`)
  return mid(rounds)
}

export interface WafToolCallCost {
  cli: string
  calls: number
  onMs: number
  offMs: number
}

interface Engine {
  command: string
  args: string[]
  env: Record<string, string>
  /** The prompt that makes the CLI run `echo hi` with its Bash tool. */
  prompt: string
}

export async function measureWafToolCall(): Promise<WafToolCallCost[]> {
  // BENCH_WAF_SANDBOX=none measures without the sandbox.
  const sandbox = process.env.BENCH_WAF_SANDBOX ?? ((await probeBwrap('bwrap')).ok ? 'bwrap' : 'none')
  const results: WafToolCallCost[] = []
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-waf-'))
  try {
    const fake = { ...FAKE_CLAUDE, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, prompt: 'tool: echo hi' }
    results.push(await onOff(`fake CLI (Node), sandbox ${sandbox}`, fake, sandbox, FAKE_CALLS))
    if (existsSync(claudeBin)) {
      const api = await startFakeAnthropic()
      const env = claudeEnv({ baseUrl: api.url })
      try {
        const real = { command: claudeBin, args: [], env: env.env, prompt: 'run: echo hi' }
        results.push(await onOff(`real Claude Code CLI, sandbox ${sandbox}`, real, sandbox, REAL_CALLS))
      } finally {
        await api.stop()
        env.cleanup()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return results
}

async function onOff(cli: string, engine: Engine, sandbox: string, calls: number): Promise<WafToolCallCost> {
  const onMs = await toolGap(engine, sandbox, true, calls)
  const offMs = await toolGap(engine, sandbox, false, calls)
  return { cli, calls, onMs, offMs }
}

/** Median ms from tool_use to tool_result in one running session; the first turn (CLI start) left out. */
async function toolGap(engine: Engine, sandbox: string, waf: boolean, calls: number): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-waf-'))
  const config = resolveConfig(
    {
      server: { port: 0 },
      engine: { command: engine.command, args: engine.args, env: engine.env, network: 'open' },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      sandbox: { mode: sandbox, state_dir: path.join(dir, 'state') },
      waf: { enabled: waf },
      log: { level: 'silent' },
    },
    {},
  )
  const service = await startService('dev', config, createLogger('silent', 'bench'))
  const client = await WsClient.connect(service.address!.replace('localhost', '127.0.0.1').replace(/^http/, 'ws') + '/ws/v1/agent')
  try {
    const gaps: number[] = []
    for (let i = 0; i <= calls; i++) {
      const id = `tool-${i}`
      client.send({ type: 'execute', session_id: 'waf-tools', request_id: id, prompt: engine.prompt })
      await client.next((msg) => msg.request_id === id && msg.event === 'completed', 60_000)
      const use = client.messages.find((msg) => msg.request_id === id && msg.event === 'tool_use')
      const result = client.messages.find((msg) => msg.request_id === id && msg.event === 'tool_result')
      if (result?.data !== 'hi') throw new Error(`the tool call of turn ${id} did not say "hi": ${JSON.stringify(result)}`)
      if (i > 0) gaps.push(Number(result.ts) - Number(use?.ts))
    }
    return mid(gaps)
  } finally {
    await client.close()
    await service.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

function mid(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

export function printWafToolCall(results: WafToolCallCost[], gateMicros = measureGateMicros()): void {
  console.log(
    '\nWAF at the tool call (in-process dev service; tool_use → tool_result of `echo hi` in one running session, WAF on and off, medians; event stamps in whole ms)\n',
  )
  console.log(`| CLI | calls | WAF on ms | WAF off ms | added ms per call (target < ${WAF_TOOL_CALL_TARGET_MS}) |`)
  console.log('|---|---:|---:|---:|---:|')
  for (const r of results) {
    const added = r.onMs - r.offMs
    console.log(
      `| ${r.cli} | ${r.calls} | ${r.onMs.toFixed(1)} | ${r.offMs.toFixed(1)} | ${added.toFixed(1)} ${added < WAF_TOOL_CALL_TARGET_MS ? 'met' : 'NOT met'} |`,
    )
  }
  console.log(
    `\nThe runner's part alone (recorded hook_callback line in → WAF check → answer line out, in-process, ${GATE_CALLS.toLocaleString('en')} calls × 5): ${gateMicros.toFixed(1)} µs per call`,
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printWafToolCall(await measureWafToolCall())
