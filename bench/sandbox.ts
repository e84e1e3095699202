/**
 * The cost of the session sandbox (issue 15): a new session's first turn with
 * the shell fake CLI (spawn to result: what the sandbox adds to a session
 * start) and a tool call's round trip with the Node fake CLI (tool_use to
 * tool_result), with `sandbox.mode: none`, bwrap with `engine.network: open`
 * and bwrap with the default `allowlist` (its forwarder starts beside the CLI:
 * socat, the default where it is installed, or the service's Node forwarder).
 * In-process dev service, sequential, medians.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { resolveConfig } from '../service/config/mod.ts'
import { probeBwrap } from '../runner/sandbox-exec/mod.ts'
import { createLogger } from '../service/logger.ts'
import { startService } from '../service/start.ts'
import { FAKE_CLAUDE } from '../test/fixtures/stack.ts'
import { WsClient } from '../test/fixtures/ws-client.ts'

const TINY_CLAUDE = fileURLToPath(new URL('../test/fakes/tiny-claude.sh', import.meta.url))
const STARTS = 30
const TOOL_CALLS = 20

export interface SandboxCost {
  scenario: string
  startMs: number
  toolMs: number
}

const SCENARIOS = [
  { scenario: 'none', sandbox: { mode: 'none' }, network: 'open' },
  { scenario: 'bwrap, network open', sandbox: { mode: 'bwrap' }, network: 'open' },
  { scenario: 'bwrap, network allowlist, socat forwarder (default)', sandbox: { mode: 'bwrap', forwarder: 'socat' }, network: 'allowlist' },
  { scenario: 'bwrap, network allowlist, node forwarder', sandbox: { mode: 'bwrap', forwarder: 'node' }, network: 'allowlist' },
] as const

export async function measureSandboxCost(): Promise<SandboxCost[] | string> {
  const probe = await probeBwrap('bwrap')
  if (!probe.ok) return `bwrap does not work here (${probe.reason}): not measured`
  const results: SandboxCost[] = []
  for (const { scenario, sandbox, network } of SCENARIOS) {
    const startMs = await sessionStarts(sandbox, network)
    const toolMs = await toolRoundTrip(sandbox, network)
    results.push({ scenario, startMs, toolMs })
  }
  return results
}

async function withService<T>(
  engine: { command: string; args: string[] },
  sandbox: Record<string, unknown>,
  network: string,
  use: (client: WsClient) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-sandbox-'))
  const config = resolveConfig(
    {
      server: { port: 0 },
      engine: { ...engine, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, network },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      sandbox: { ...sandbox, state_dir: path.join(dir, 'state') },
      waf: { enabled: false },
      log: { level: 'silent' },
    },
    {},
  )
  const service = await startService('dev', config, createLogger('silent', 'bench'))
  const client = await WsClient.connect(service.address!.replace('localhost', '127.0.0.1').replace(/^http/, 'ws') + '/ws/v1/agent')
  try {
    return await use(client)
  } finally {
    await client.close()
    await service.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

/** Median ms from execute to completed of a new session's first turn (a fresh CLI each time). */
async function sessionStarts(sandbox: Record<string, unknown>, network: string): Promise<number> {
  return withService({ command: TINY_CLAUDE, args: [] }, sandbox, network, async (client) => {
    const times: number[] = []
    for (let i = 0; i < STARTS; i++) {
      const session = `start-${i}`
      const t0 = performance.now()
      client.send({ type: 'execute', session_id: session, request_id: session, prompt: 'hi' })
      await client.next((msg) => msg.request_id === session && msg.event === 'completed', 30_000)
      times.push(performance.now() - t0)
    }
    return mid(times)
  })
}

/** Median ms from tool_use to tool_result of `tool: true` in one running session. */
async function toolRoundTrip(sandbox: Record<string, unknown>, network: string): Promise<number> {
  return withService(FAKE_CLAUDE, sandbox, network, async (client) => {
    const gaps: number[] = []
    for (let i = 0; i <= TOOL_CALLS; i++) {
      const id = `tool-${i}`
      client.send({ type: 'execute', session_id: 'tools', request_id: id, prompt: 'tool: true' })
      await client.next((msg) => msg.request_id === id && msg.event === 'completed', 30_000)
      const use = client.messages.find((msg) => msg.request_id === id && msg.event === 'tool_use')!
      const result = client.messages.find((msg) => msg.request_id === id && msg.event === 'tool_result')!
      // The first turn also starts the CLI: left out.
      if (i > 0) gaps.push(Number(result.ts) - Number(use.ts))
    }
    return mid(gaps)
  })
}

function mid(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

export function printSandboxCost(results: SandboxCost[] | string): void {
  console.log(
    `\nSession sandbox cost (in-process dev service; session start = a new session's first turn with the shell fake CLI, median of ${STARTS}; tool round trip = tool_use → tool_result of \`true\` with the Node fake CLI, median of ${TOOL_CALLS})\n`,
  )
  if (typeof results === 'string') return void console.log(results)
  const base = results[0]!
  console.log('| sandbox | session start ms | added ms (target < 20) | tool round trip ms | added ms |')
  console.log('|---|---:|---:|---:|---:|')
  for (const r of results) {
    console.log(
      `| ${r.scenario} | ${r.startMs.toFixed(1)} | ${(r.startMs - base.startMs).toFixed(1)} | ${r.toolMs.toFixed(1)} | ${(r.toolMs - base.toolMs).toFixed(1)} |`,
    )
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printSandboxCost(await measureSandboxCost())
