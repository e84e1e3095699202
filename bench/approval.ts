/**
 * The approval path's own latency: a client sees a `permission_request`,
 * answers `allow_once` at once, and the CLI (test/fakes/fake-claude.ts, which
 * asks about every Bash call with `--permission-prompt-tool stdio`) receives
 * the answer. Measured from the client's receipt of the request to the CLI's
 * receipt of the answer, both on the wall clock with microseconds
 * (performance.timeOrigin + now: one clock for every process of this machine).
 * Runs alone: `node bench/approval.ts` (dev and production, a table).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { WsClient } from '../test/fixtures/ws-client.ts'
import { FAKE_CLI, startDev, startProduction, type System } from './systems.ts'

export const APPROVAL = { turns: 60, warmup: 5 } as const

/** Where each CLI appends the time an answer reached it (relative: the session's own directory). */
const ANSWER_LOG = 'approval-answers.log'

/** The config that makes the service ask and the fake CLI log each answer's arrival. */
export const APPROVAL_CONFIG = { engine: { approval: 'ask', env: { FAKE_CLAUDE_ANSWER_LOG: ANSWER_LOG } } }

export interface ApprovalFigures {
  p50Ms: number
  p99Ms: number
  turns: number
}

/** `turns` turns of one session, each asking once; latencies of the ones after the warm-up. */
export async function measureApproval(system: System, dir: string, label: string): Promise<ApprovalFigures> {
  const client = await WsClient.connect(system.wsUrl)
  const sessionId = `approval-${label}-${process.pid}`
  const seen: number[] = []
  try {
    for (let turn = 0; turn < APPROVAL.turns; turn++) {
      const requestId = `a${turn}`
      client.send({ type: 'execute', request_id: requestId, session_id: sessionId, prompt: 'tool: true' })
      const request = await client.next((msg) => msg.request_id === requestId && msg.event === 'permission_request', 60_000)
      seen.push(performance.timeOrigin + performance.now())
      client.send({ type: 'permission_reply', session_id: sessionId, permission_id: (request.permission as { id: string }).id, decision: 'allow_once' })
      const end = await client.next((msg) => msg.request_id === requestId && (msg.event === 'completed' || msg.event === 'error'), 60_000)
      if (end.event !== 'completed') throw new Error(`approval bench: turn ${turn} ended ${JSON.stringify(end)}`)
    }
  } finally {
    client.messages.length = 0
    await client.close()
  }
  const arrived = answerTimes(dir, sessionId)
  if (arrived.length !== seen.length) throw new Error(`approval bench: the CLI logged ${arrived.length} answers for ${seen.length} requests`)
  const latencies = seen
    .map((at, i) => arrived[i]! - at)
    .slice(APPROVAL.warmup)
    .sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { p50Ms: at(0.5), p99Ms: at(0.99), turns: latencies.length }
}

/** The arrival times the session's CLI logged, in order (one CLI process per session here: one file). */
function answerTimes(dir: string, sessionId: string): number[] {
  for (const entry of readdirSync(dir)) {
    const file = path.join(dir, entry, sessionId, ANSWER_LOG)
    if (entry.endsWith('-sessions') && existsSync(file)) {
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => Number(line.split(' ')[1]))
    }
  }
  throw new Error(`approval bench: no ${ANSWER_LOG} for session ${sessionId} under ${dir}`)
}

/** Dev, then production, each started for it and stopped after; the table's rows. */
export async function measureApprovalModes(dir: string): Promise<[string, ApprovalFigures, number][]> {
  const rows: [string, ApprovalFigures, number][] = []
  for (const [name, start, target] of [
    ['dev', () => startDev(dir, FAKE_CLI, APPROVAL_CONFIG), 5],
    ['production (JetStream)', () => startProduction(dir, FAKE_CLI, APPROVAL_CONFIG), 15],
  ] as const) {
    const system = await start()
    try {
      rows.push([name, await measureApproval(system, dir, name.split(' ')[0]!), target])
    } finally {
      await system.stop()
    }
  }
  return rows
}

export function printApproval(rows: [string, ApprovalFigures, number][]): void {
  console.log(
    `\nApproval latency: the client sees permission_request and answers at once → the CLI receives the answer (${APPROVAL.turns - APPROVAL.warmup} turns after ${APPROVAL.warmup} warm-up)\n`,
  )
  console.log('| mode | p50 ms | p99 ms | target (p99) |')
  console.log('|---|---:|---:|---|')
  for (const [name, f, target] of rows)
    console.log(`| ${name} | ${f.p50Ms.toFixed(2)} | ${f.p99Ms.toFixed(2)} | < ${target} ms ${f.p99Ms < target ? 'met' : 'MISSED'} |`)
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-approval-'))
  try {
    printApproval(await measureApprovalModes(dir))
    console.log(
      `\n${os.cpus().length} cores, Node ${process.versions.node}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) await main()
