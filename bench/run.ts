/**
 * `npm run bench`: one table. The bare relay floor (bench/floor.ts), ours in
 * dev mode, ours in production (gateway + runner over a private nats-server
 * with JetStream) and HotPlex v0.10.0 (a binary at HOTPLEX_BIN) relay the same
 * fake CLI, driven over their native WebSockets on loopback, all running in
 * the same run and measured in turns (bench/compare.ts); medians of 3 rounds,
 * with ratios against the floor and HotPlex; then 1,000 idle sessions on ours
 * in production; then the approval path's latency in dev and production
 * (bench/approval.ts). With HotPlex, the whole run happens in a private network
 * namespace (bench/private-network.ts).
 * The other benchmarks: `node bench/suite.ts` (relay, starts, replay,
 * Kubernetes, REST, sandbox, WAF), each also runnable alone.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { measureApprovalModes, printApproval } from './approval.ts'
import { LOAD, measureSystems, type RelayFigures } from './compare.ts'
import { IDLE, measureIdleSessions, type IdleFigures } from './idle-sessions.ts'
import { onlyLoopback, rerunInPrivateNetwork } from './private-network.ts'
import { FAKE_CLI, HOTPLEX_BIN, startDev, startFloor, startHotPlex, startProduction, TINY_CLI, type System } from './systems.ts'

type Column = 'floor' | 'dev' | 'production' | 'hotplex'

/**
 * Why HotPlex's column stays empty in this run, if it does. Where the run can move into a
 * network namespace with loopback only, it runs there instead and this process exits with its code.
 */
function whyNoHotPlex(): string | undefined {
  if (!existsSync(HOTPLEX_BIN)) return `no binary at ${HOTPLEX_BIN} (set HOTPLEX_BIN to a hotplexd of v0.10.0, commit c101e6bc)`
  if (onlyLoopback()) return undefined
  const rerun = rerunInPrivateNetwork()
  if ('exitCode' in rerun) process.exit(rerun.exitCode)
  return `it listens on every interface, and the run cannot be moved to a network namespace with loopback only: ${rerun.reason}`
}

async function main(): Promise<void> {
  const skipHotPlex = whyNoHotPlex()
  const began = performance.now()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-'))
  const log = (line: string) => console.error(`[${((performance.now() - began) / 1000).toFixed(0)} s] ${line}`)
  try {
    const figures: Partial<Record<Column, RelayFigures>> = {}
    const started: [Column, System][] = []
    try {
      started.push(['floor', await startFloor(FAKE_CLI)], ['dev', await startDev(dir, FAKE_CLI)], ['production', await startProduction(dir, FAKE_CLI)])
      if (skipHotPlex) log(`HotPlex skipped: ${skipHotPlex}. Its column stays empty.`)
      else started.push(['hotplex', await startHotPlex(dir, FAKE_CLI)])
      const measured = await measureSystems(
        started.map(([, system]) => system),
        log,
      )
      for (const [i, [column]] of started.entries()) figures[column] = measured[i]
    } finally {
      await Promise.all(started.map(([, system]) => system.stop()))
    }
    const production = await startProduction(dir, TINY_CLI, { engine: { idle_timeout: IDLE.idleTimeout } })
    let idle: IdleFigures
    try {
      idle = await measureIdleSessions(production, 'tiny-claude', log)
    } finally {
      await production.stop()
    }
    const approval = await measureApprovalModes(dir)
    printTable(figures, idle)
    printApproval(approval)
    console.log(
      `\n${os.cpus().length} cores, Node ${process.versions.node}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; the bench took ${((performance.now() - began) / 1000).toFixed(0)} s.`,
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

interface Row {
  measure: string
  value(f: RelayFigures): number
  format(value: number): string
  /** Bigger is better (events/s) or smaller (CPU, memory, latency). */
  higherIsBetter: boolean
  /** Shown against the floor's: the added latency. */
  added?: boolean
}

const signed = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)}`
const int = (value: number) => Math.round(value).toLocaleString('en')
const ROWS: Row[] = [
  { measure: `1 session flooding ${int(LOAD.floodEvents)} events: events/s`, value: (f) => f.floodEventsPerSecond, format: int, higherIsBetter: true },
  { measure: '1 session: service CPU µs/event', value: (f) => f.floodCpuMicros, format: (v) => v.toFixed(1), higherIsBetter: false },
  { measure: `${LOAD.sessions} sessions × ${LOAD.sessionEvents} events: events/s`, value: (f) => f.manyEventsPerSecond, format: int, higherIsBetter: true },
  { measure: `${LOAD.sessions} sessions: service CPU µs/event`, value: (f) => f.manyCpuMicros, format: (v) => v.toFixed(1), higherIsBetter: false },
  { measure: `gateway RSS after ${LOAD.sessions} sessions: MB`, value: (f) => f.manyGatewayRss / 2 ** 20, format: (v) => v.toFixed(0), higherIsBetter: false },
  {
    measure: `paced ${int(LOAD.pacedRate)}/s: p99 ms (added over the floor)`,
    value: (f) => f.pacedP99Ms,
    format: (v) => v.toFixed(2),
    higherIsBetter: false,
    added: true,
  },
]

function printTable(figures: Partial<Record<Column, RelayFigures>>, idle: IdleFigures): void {
  const { floor, dev, production, hotplex } = figures
  const cell = (row: Row, f: RelayFigures | undefined, ratios: boolean) => {
    if (!f) return '–'
    const value = row.value(f)
    if (!ratios) return row.format(value)
    const parts: string[] = []
    if (floor) parts.push(row.added ? signed(value - row.value(floor)) : `${(value / row.value(floor)).toFixed(2)}× floor`)
    if (hotplex && f !== hotplex) parts.push(`${(value / row.value(hotplex)).toFixed(2)}× HotPlex`)
    return `${row.format(value)} (${parts.join(', ')})`
  }
  console.log(
    `\nRelay of one fake CLI (test/fakes/fake-claude.ts) to WebSocket clients on loopback, medians of ${LOAD.rounds} rounds; service CPU = its processes' user + system time (production: gateway, runner and nats-server), not the CLIs'\n`,
  )
  console.log('| measure | bare floor | ours (dev) | ours (production, JetStream) | HotPlex v0.10.0 |')
  console.log('|---|---:|---:|---:|---:|')
  for (const row of ROWS) {
    console.log(`| ${row.measure} | ${cell(row, floor, false)} | ${cell(row, dev, true)} | ${cell(row, production, true)} | ${cell(row, hotplex, true)} |`)
  }
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`
  console.log(
    `| ${int(idle.sessions)} idle sessions (client connected, one turn done, CLI reaped): gateway memory per session | – | – | ${kb(idle.gatewayBytesPerSession)} | – |`,
  )
  console.log(`| ${int(idle.sessions)} idle sessions: runner memory per session | – | – | ${kb(idle.runnerBytesPerSession)} | – |`)
  console.log(`| ${int(idle.sessions)} session starts (${IDLE.inFlight} in flight, shell fake CLI): starts/s | – | – | ${int(idle.startsPerSecond)} | – |`)
  console.log(`| session start (execute → end of its first turn): p99 ms | – | – | ${idle.startP99Ms.toFixed(0)} | – |`)
  printTargets(figures, idle)
}

function printTargets(figures: Partial<Record<Column, RelayFigures>>, idle: IdleFigures): void {
  const { floor, dev, production, hotplex } = figures
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED')
  const lines: string[] = []
  if (dev && floor) {
    lines.push(
      `dev, 1 session ≥ 75% of the floor's events/s: ${((dev.floodEventsPerSecond / floor.floodEventsPerSecond) * 100).toFixed(0)}% ${met(dev.floodEventsPerSecond >= 0.75 * floor.floodEventsPerSecond)}`,
    )
    lines.push(`dev, added paced p99 < 2 ms: ${(dev.pacedP99Ms - floor.pacedP99Ms).toFixed(2)} ms ${met(dev.pacedP99Ms - floor.pacedP99Ms < 2)}`)
  }
  if (production && floor) {
    lines.push(
      `production, 1 session ≥ 60% of the floor's events/s: ${((production.floodEventsPerSecond / floor.floodEventsPerSecond) * 100).toFixed(0)}% ${met(production.floodEventsPerSecond >= 0.6 * floor.floodEventsPerSecond)}`,
    )
    lines.push(
      `production, added paced p99 < 2 ms: ${(production.pacedP99Ms - floor.pacedP99Ms).toFixed(2)} ms ${met(production.pacedP99Ms - floor.pacedP99Ms < 2)}`,
    )
  }
  if (dev && hotplex) {
    lines.push(
      `dev, ${LOAD.sessions} sessions events/s ≥ 1.2× HotPlex: ${(dev.manyEventsPerSecond / hotplex.manyEventsPerSecond).toFixed(2)}× ${met(dev.manyEventsPerSecond >= 1.2 * hotplex.manyEventsPerSecond)}`,
    )
    lines.push(
      `dev, ${LOAD.sessions} sessions CPU/event ≤ 0.8× HotPlex: ${(dev.manyCpuMicros / hotplex.manyCpuMicros).toFixed(2)}× ${met(dev.manyCpuMicros <= 0.8 * hotplex.manyCpuMicros)}`,
    )
    lines.push(
      `dev, gateway RSS ≤ HotPlex's: ${(dev.manyGatewayRss / 2 ** 20).toFixed(0)} vs ${(hotplex.manyGatewayRss / 2 ** 20).toFixed(0)} MB ${met(dev.manyGatewayRss <= hotplex.manyGatewayRss)}`,
    )
  }
  const perSession = Math.max(idle.gatewayBytesPerSession, idle.runnerBytesPerSession)
  lines.push(
    `idle session < 100 KB (gateway and runner each): ${(idle.gatewayBytesPerSession / 1024).toFixed(0)} / ${(idle.runnerBytesPerSession / 1024).toFixed(0)} KB ${met(perSession < 100 * 1024)}`,
  )
  console.log(`\nTargets (issue 12):\n${lines.map((line) => `- ${line}`).join('\n')}`)
}

await main()
