/**
 * What the WAF adds to a tool call (issue 12, "WAF at the tool call"): the
 * tool_use → tool_result gap of a harmless Bash call with the WAF on, minus
 * the same gap with the WAF off, in one running session of the in-process dev
 * service (bwrap sandbox where it works). Measured with the Node fake CLI and,
 * when it is installed, the real Claude Code CLI against the fake Anthropic
 * API. Sequential calls, medians. Target: < 2 ms added per call.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { probeBwrap } from '../runner/sandbox-exec/mod.ts'
import { resolveConfig } from '../service/config/mod.ts'
import { createLogger } from '../service/logger.ts'
import { startService } from '../service/start.ts'
import { startFakeAnthropic } from '../test/fakes/anthropic-api.ts'
import { claudeBin, claudeEnv } from '../test/fixtures/claude-env.ts'
import { FAKE_CLAUDE } from '../test/fixtures/stack.ts'
import { WsClient } from '../test/fixtures/ws-client.ts'

const FAKE_CALLS = 30
const REAL_CALLS = 10
/** The target for what the WAF adds to one tool call. */
export const WAF_TOOL_CALL_TARGET_MS = 2

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
  const config = resolveConfig({
    server: { port: 0 },
    engine: { command: engine.command, args: engine.args, env: engine.env, network: 'open' },
    session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
    sandbox: { mode: sandbox, state_dir: path.join(dir, 'state') },
    waf: { enabled: waf },
    log: { level: 'silent' },
  }, {})
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

export function printWafToolCall(results: WafToolCallCost[]): void {
  console.log('\nWAF at the tool call (in-process dev service; tool_use → tool_result of `echo hi` in one running session, WAF on and off, medians)\n')
  console.log(`| CLI | calls | WAF on ms | WAF off ms | added ms per call (target < ${WAF_TOOL_CALL_TARGET_MS}) |`)
  console.log('|---|---:|---:|---:|---:|')
  for (const r of results) {
    const added = r.onMs - r.offMs
    console.log(`| ${r.cli} | ${r.calls} | ${r.onMs.toFixed(1)} | ${r.offMs.toFixed(1)} | ${added.toFixed(1)} ${added < WAF_TOOL_CALL_TARGET_MS ? 'met' : 'NOT met'} |`)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printWafToolCall(await measureWafToolCall())
