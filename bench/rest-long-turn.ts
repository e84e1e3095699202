/**
 * A long turn over the OpenCode REST layer: one session, one blocking prompt
 * (`POST /session/{id}/message` with OpenCode's `parts` body) whose turn
 * makes N answer events, with one `/event` subscriber reading along. Measures
 * the time from the prompt to its answer, and the slowest `/health` answer
 * while the turn runs (how long the gateway's event loop was held).
 *
 * The service runs as a separate `agent-runtime dev` process with the fake CLI.
 * Alone: `node bench/rest-long-turn.ts [N …]`; `npm run bench` runs it too.
 */
import { mkdtemp, rm } from 'node:fs/promises'
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
    turnDone = true
    await probe
    const texts = answer.parts.filter((part) => part.type === 'text').length
    if (texts !== events) throw new Error(`expected ${events} text parts, got ${texts}`)
    stream.abort()
    return { events, seconds, healthMaxMs, frames: await frames }
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
  console.log('| events | seconds | µs per event | slowest /health during the turn, ms |')
  console.log('|---:|---:|---:|---:|')
  for (const r of results) {
    console.log(`| ${r.events.toLocaleString('en')} | ${r.seconds.toFixed(2)} | ${((r.seconds * 1e6) / r.events).toFixed(1)} | ${r.healthMaxMs.toFixed(1)} |`)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number)
  printRestLongTurns(await measureRestLongTurns(sizes.length > 0 ? sizes : REST_TURN_EVENTS))
}
