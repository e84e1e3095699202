/**
 * The highest session start rate at which every turn completes (issue 16):
 * a dev-mode service process, new sessions (one turn each) at rising rates,
 * a fixed time per step. For each step: sessions started, completed, errored,
 * lost (no end within the drain time), and the first-event latency (execute
 * sent → the turn's first event at the client) p50/p99.
 *
 * Run alone with `node bench/session-start-rate.ts`; `npm run bench` runs it too.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { atRate, LoadClient, percentile, TINY_CLAUDE, type LoadTurn } from '../test/fixtures/load.ts'
import { startServiceProcess } from '../test/fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../test/fixtures/stack.ts'

/** Connections the sessions are spread over, round-robin. */
const CONNECTIONS = 32
/** After a step's last execute, how long its turns may take to end before they count as lost. */
const DRAIN_MS = 20_000
/** CLIs are reaped this long after their turn, so a step's CLIs are gone before the next one's start. */
const IDLE_TIMEOUT = '2s'

/** One engine's steps: the shell fake measures the service; the Node fake adds a runtime's start per session. */
const PLANS = [
  { engine: 'shell fake CLI (tiny-claude.sh)', cli: TINY_CLAUDE, rates: [10, 20, 40, 80, 160, 320], seconds: 10 },
  { engine: 'Node fake CLI (fake-claude.ts)', cli: FAKE_CLAUDE, rates: [5, 10, 20, 40], seconds: 8 },
] as const

export interface RateStep {
  rate: number
  started: number
  completed: number
  errored: number
  lost: number
  firstEventP50Ms: number
  firstEventP99Ms: number
  /** The machine's 1-minute load average at the step's end: the cores are shared, and it shows. */
  loadAverage: number
  /** An example of an error end, when there was one. */
  error?: string
}

export interface RatePlanResult {
  engine: string
  seconds: number
  steps: RateStep[]
}

/** Runs steps of rising rates against `wsUrl`; stops after the first step in which not every turn completed. */
export async function measureStartRates(wsUrl: string, rates: readonly number[], seconds: number, label: string): Promise<RateStep[]> {
  const steps: RateStep[] = []
  for (const rate of rates) {
    const client = await LoadClient.open(wsUrl, CONNECTIONS)
    try {
      const turns: LoadTurn[] = []
      await atRate(rate, seconds * 1000, (i) => {
        const id = `${label}-${rate}-${i}`
        turns.push(client.execute(id, 'hello', id))
      })
      await client.waitForEnds(turns, DRAIN_MS)
      const ends = turns.map((turn) => turn.ends[0])
      const firstEvent = turns.flatMap((turn) => (turn.firstEventAt === undefined ? [] : [turn.firstEventAt - turn.sentAt]))
      const error = ends.find((end) => end?.event === 'error')
      const step: RateStep = {
        rate,
        started: turns.length,
        completed: ends.filter((end) => end?.event === 'completed').length,
        errored: ends.filter((end) => end !== undefined && end.event !== 'completed').length,
        lost: ends.filter((end) => end === undefined).length,
        firstEventP50Ms: percentile(firstEvent, 50),
        firstEventP99Ms: percentile(firstEvent, 99),
        loadAverage: os.loadavg()[0]!,
        ...(error && { error: JSON.stringify((error as { error?: unknown }).error ?? error.data) }),
      }
      steps.push(step)
      if (step.completed < step.started) break
    } finally {
      await client.close()
    }
    // Let the step's CLIs be reaped before the next step starts.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
  }
  return steps
}

/** Every plan against a fresh dev-mode service process of its own. */
export async function measureSessionStartRates(): Promise<RatePlanResult[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-rate-'))
  const results: RatePlanResult[] = []
  try {
    for (const [i, plan] of PLANS.entries()) {
      const config = {
        server: { port: 0, shutdown_grace: '1s' },
        engine: { ...plan.cli, env: { CLAUDE_CONFIG_DIR: path.join(dir, `claude-${i}`) }, idle_timeout: IDLE_TIMEOUT },
        session: { work_dir: path.join(dir, `sessions-${i}`), marker_dir: path.join(dir, `markers-${i}`) },
        // Room is not what is measured: sessions are owned from claim to reap, thousands at the top rates.
        runner: { max_sessions: 10_000 },
        log: { level: 'info' },
      }
      const service = await startServiceProcess('dev', config, dir)
      try {
        const wsUrl = service.address!.replace('http', 'ws') + '/ws/v1/agent'
        results.push({ engine: plan.engine, seconds: plan.seconds, steps: await measureStartRates(wsUrl, plan.rates, plan.seconds, `rate${i}`) })
      } finally {
        await service.stop()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return results
}

export function printSessionStartRates(results: RatePlanResult[]): void {
  const ms = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(1))
  console.log(
    `\nSession start rate (dev mode, new sessions at a fixed rate for each step, one turn each, ${CONNECTIONS} WebSockets; lost = no end within ${DRAIN_MS / 1000} s; first event = execute sent → the turn's first event)\n`,
  )
  console.log(`| CLI | sessions/s | started | completed | errored | lost (no end in ${DRAIN_MS / 1000} s) | first event p50 ms | p99 ms | load avg |`)
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const result of results) {
    for (const step of result.steps) {
      console.log(
        `| ${result.engine} | ${step.rate} | ${step.started} | ${step.completed} | ${step.errored} | ${step.lost} | ${ms(step.firstEventP50Ms)} | ${ms(step.firstEventP99Ms)} | ${step.loadAverage.toFixed(1)} |`,
      )
    }
  }
  for (const result of results) {
    const all = result.steps.filter((step) => step.completed === step.started)
    const best = all.at(-1)
    const tried = result.steps.at(-1)!
    const limit =
      best === undefined ? 'none of the rates tried' : `${best.rate}/s (first event p50 ${ms(best.firstEventP50Ms)} ms, p99 ${ms(best.firstEventP99Ms)} ms)`
    const above =
      tried !== best
        ? `; at ${tried.rate}/s ${tried.completed} of ${tried.started} completed${tried.error ? `, e.g. ${tried.error}` : ''}`
        : '; the highest rate tried'
    console.log(`\nHighest start rate with every turn completed, ${result.engine}: ${limit}${above}`)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`Machine: ${os.cpus().length} cores, Node ${process.versions.node}`)
  printSessionStartRates(await measureSessionStartRates())
}
