/**
 * A long turn over the OpenCode REST layer: one session, one blocking prompt
 * (`POST /session/{id}/message` with OpenCode's `parts` body) whose turn
 * makes N answer events, with one `/event` subscriber reading along. Measures
 * the time from the prompt to its answer, the CPU time the service process
 * spent on it (steadier than wall time on a shared machine), its event loop's
 * delay over the turn (p99 and max, from /metrics: prom-client's
 * monitorEventLoopDelay, reset by each scrape), and the slowest `/health`
 * answer while the turn runs, as a client sees it.
 *
 * The service runs as a separate `agent-runtime dev` process with the fake CLI.
 * Alone: `node bench/rest-long-turn.ts [N …]`; `npm run bench` runs it too.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServiceProcess } from '../test/fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../test/fixtures/stack.ts'

export const REST_TURN_EVENTS = [20_000, 40_000, 80_000] as const

/** What one long REST turn measured. */
export interface RestTurnResult {
  events: number
  seconds: number
  /** User + system CPU time of the service process (gateway and runner) over the turn. */
  cpuSeconds: number
  /** The service's event-loop delay over the turn, ms. */
  loopP99Ms: number
  loopMaxMs: number
  /** The slowest `/health` answer during the turn. */
  healthMaxMs: number
  /** Frames the `/event` subscriber read. */
  frames: number
}

/** Runs one long REST turn per size, each on a fresh service process. */
export async function measureRestLongTurns(sizes: readonly number[] = REST_TURN_EVENTS): Promise<RestTurnResult[]> {
  const results: RestTurnResult[] = []
  for (const events of sizes) results.push(await measureOne(events))
  return results
}

async function measureOne(events: number): Promise<RestTurnResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-rest-'))
  const config = {
    server: { port: 0 },
    engine: { ...FAKE_CLAUDE, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') } },
    session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
    // Keep every event of the turn, as a session that replays it would.
    state: { events_per_session: 2 * events + 100 },
    log: { level: 'info' },
  }
  const service = await startServiceProcess('dev', config, dir)
  const base = service.address!
  const stream = new AbortController()
  try {
    const session = (await post(`${base}/session`, {})) as { id: string }
    // Warm-up turn: JIT and the CLI's start are not what is measured.
    await post(`${base}/session/${session.id}/message`, { parts: [{ type: 'text', text: 'burst: 100' }] })

    const frames = readEvents(`${base}/event`, stream.signal)
    await loopDelay(base) // resets the delay histogram
    const cpuBefore = await cpuTime(service.child.pid!)
    let turnDone = false
    let healthMaxMs = 0
    const probe = (async () => {
      while (!turnDone) {
        const sent = performance.now()
        await fetch(`${base}/health`).then((r) => r.arrayBuffer())
        healthMaxMs = Math.max(healthMaxMs, performance.now() - sent)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })()
    const started = performance.now()
    const answer = (await post(`${base}/session/${session.id}/message`, { parts: [{ type: 'text', text: `burst: ${events}` }] }, 600_000)) as {
      parts: { type: string }[]
    }
    const seconds = (performance.now() - started) / 1000
    const cpuSeconds = (await cpuTime(service.child.pid!)) - cpuBefore
    const loop = await loopDelay(base)
    turnDone = true
    await probe
    const texts = answer.parts.filter((part) => part.type === 'text').length
    if (texts !== events) throw new Error(`expected ${events} text parts, got ${texts}`)
    stream.abort()
    return { events, seconds, cpuSeconds, loopP99Ms: loop.p99Ms, loopMaxMs: loop.maxMs, healthMaxMs, frames: await frames }
  } finally {
    stream.abort()
    await service.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

async function post(url: string, body: unknown, timeoutMs = 60_000): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`)
  return response.json()
}

/** User + system CPU seconds of a process so far (Linux /proc). */
async function cpuTime(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 14 and 15 of stat(5), utime and stime, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The event-loop delay since the previous scrape of /metrics, ms. */
async function loopDelay(base: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (await fetch(`${base}/metrics`)).text()
  const value = (name: string) => 1000 * Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN)
  return { p99Ms: value('nodejs_eventloop_lag_p99_seconds'), maxMs: value('nodejs_eventloop_lag_max_seconds') }
}

/** Reads the stream until aborted; answers the number of frames. */
async function readEvents(url: string, signal: AbortSignal): Promise<number> {
  let frames = 0
  try {
    const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal })
    const decoder = new TextDecoder()
    for await (const chunk of response.body!) frames += decoder.decode(chunk, { stream: true }).split('\n\n').length - 1
  } catch {
    // aborted: the measure is over
  }
  return frames
}

/** The results as a Markdown table. */
export function printRestLongTurns(results: readonly RestTurnResult[]): void {
  console.log('\nLong turn over OpenCode REST (one blocking prompt, N answer events, one /event subscriber; fake CLI)\n')
  console.log('| events | seconds | service CPU s | CPU µs per event | event-loop delay p99 / max, ms | slowest /health, ms |')
  console.log('|---:|---:|---:|---:|---:|---:|')
  for (const r of results) {
    const perEvent = ((r.cpuSeconds * 1e6) / r.events).toFixed(1)
    console.log(
      `| ${r.events.toLocaleString('en')} | ${r.seconds.toFixed(2)} | ${r.cpuSeconds.toFixed(2)} | ${perEvent} | ${r.loopP99Ms.toFixed(1)} / ${r.loopMaxMs.toFixed(1)} | ${r.healthMaxMs.toFixed(1)} |`,
    )
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number)
  printRestLongTurns(await measureRestLongTurns(sizes.length > 0 ? sizes : REST_TURN_EVENTS))
}
