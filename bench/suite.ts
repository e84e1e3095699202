/**
 * `node bench/suite.ts`: the service as users run it (separate processes), measured
 * from outside over WebSockets:
 *  - relay: events/s and latency from a CLI stdout line to the client, for the
 *    in-process bus, NATS without persistence, and NATS with JetStream;
 *  - session starts per second;
 *  - the highest session start rate at which every turn completes, with
 *    first-event p50/p99 (bench/session-start-rate.ts);
 *  - replay speed of stored events to a resuming client;
 *  - Kubernetes: session start from a warm pool in a fake cluster;
 *  - a long turn over the OpenCode REST layer (linear in its events);
 *  - the session sandbox's cost: session start and tool round trip with and without it (bench/sandbox.ts);
 *  - the WAF at the tool call: what the in-process tool gate adds per call (bench/waf-tool-call.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startNats } from '../test/fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../test/fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../test/fixtures/stack.ts'
import { measureK8sWarmStart, printK8sWarmStart } from './k8s-warm-start.ts'
import { measureRelay, type RelayResult } from './relay.ts'
import { measureRestLongTurns, printRestLongTurns } from './rest-long-turn.ts'
import { measureSessionStartRates, printSessionStartRates } from './session-start-rate.ts'
import { measureReplay, measureSessionStarts } from './sessions.ts'
import { measureSandboxCost, printSandboxCost } from './sandbox.ts'
import { measureWafToolCall, printWafToolCall } from './waf-tool-call.ts'

const RELAY = { burstLines: 100_000, stampedLines: 20_000, stampedRate: 5_000 }
const SESSIONS = 200
const REPLAY_EVENTS = 20_000
const TINY_CLAUDE = fileURLToPath(new URL('../test/fakes/tiny-claude.sh', import.meta.url))

interface Topology {
  name: string
  /** The WebSocket URL of the gateway. */
  wsUrl: string
  stop(): Promise<void>
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-bench-'))
  const nats = await startNats()
  let run = 0
  const config = (engine: { command: string; args: string[] }, extra: Record<string, unknown> = {}) => {
    const name = `run${run++}`
    return {
      server: { port: 0 },
      engine: { ...engine, env: { CLAUDE_CONFIG_DIR: path.join(dir, `${name}-claude`) } },
      session: { work_dir: path.join(dir, `${name}-sessions`), marker_dir: path.join(dir, `${name}-markers`) },
      runner: { max_sessions: 1_000 },
      nats: { url: nats.url, prefix: `bench-${process.pid}-${name}` },
      // info: the start-up line tells the harness the process is ready; nothing logs per event.
      log: { level: 'info' },
      ...extra,
    }
  }
  const dev = async (engine: typeof FAKE_CLAUDE): Promise<Topology> => {
    const service = await startServiceProcess('dev', config(engine), dir)
    return { name: 'in-process bus (dev)', wsUrl: wsUrl(service), stop: () => service.stop().then(() => {}) }
  }
  const split = async (engine: typeof FAKE_CLAUDE, backend: 'memory' | 'jetstream'): Promise<Topology> => {
    // Keep every event of the replay session (the default keeps the newest 10,000).
    const shared = config(engine, { state: { backend, events_per_session: 2 * REPLAY_EVENTS } })
    const runner = await startServiceProcess('runner', shared, dir)
    const gateway = await startServiceProcess('gateway', shared, dir)
    const stop = async (services: ServiceProcess[]) => void (await Promise.all(services.map((service) => service.stop())))
    return { name: backend === 'memory' ? 'NATS, no persistence' : 'NATS + JetStream', wsUrl: wsUrl(gateway), stop: () => stop([gateway, runner]) }
  }
  const tiny = { command: TINY_CLAUDE, args: [] }

  try {
    const relay: RelayResult[] = []
    for (const start of [() => dev(FAKE_CLAUDE), () => split(FAKE_CLAUDE, 'memory'), () => split(FAKE_CLAUDE, 'jetstream')]) {
      const topology = await start()
      relay.push(await measureRelay(topology.name, topology.wsUrl, RELAY))
      await topology.stop()
    }
    const starts: [string, number][] = []
    for (const start of [() => dev(tiny), () => split(tiny, 'jetstream')]) {
      const topology = await start()
      starts.push([topology.name, await measureSessionStarts(topology.wsUrl, SESSIONS, 20, `s${run}`)])
      await topology.stop()
    }
    const jetstream = await split(FAKE_CLAUDE, 'jetstream')
    const replay = await measureReplay(jetstream.wsUrl, REPLAY_EVENTS)
    await jetstream.stop()
    const rates = await measureSessionStartRates()
    printTables(relay, starts, replay)
    printSessionStartRates(rates)
    printK8sWarmStart(await measureK8sWarmStart())
    printRestLongTurns(await measureRestLongTurns())
    printSandboxCost(await measureSandboxCost())
    printWafToolCall(await measureWafToolCall())
  } finally {
    await nats.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

function wsUrl(service: ServiceProcess): string {
  return service.address!.replace('http', 'ws') + '/ws/v1/agent'
}

function printTables(relay: RelayResult[], starts: [string, number][], replay: number): void {
  const ms = (value: number) => value.toFixed(2)
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED')
  console.log(`\nMachine: ${os.cpus().length} cores, Node ${process.versions.node}`)
  console.log(
    `\nRelay, CLI stdout line → WebSocket client (burst of ${RELAY.burstLines} lines for events/s; ${RELAY.stampedLines} stamped lines at ${RELAY.stampedRate}/s for latency)\n`,
  )
  console.log('| scenario | events/s | p50 ms | p99 ms | max ms | target ≥ 20,000/s, p99 < 5 ms |')
  console.log('|---|---:|---:|---:|---:|---|')
  for (const r of relay) {
    console.log(
      `| ${r.scenario} | ${r.eventsPerSecond.toLocaleString('en')} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${ms(r.maxMs)} | ${met(r.eventsPerSecond >= 20_000 && r.p99Ms < 5)} |`,
    )
  }
  const plain = relay.find((r) => r.scenario === 'NATS, no persistence')
  const persisted = relay.find((r) => r.scenario === 'NATS + JetStream')
  if (plain && persisted) {
    const added = persisted.p99Ms - plain.p99Ms
    console.log(`\nJetStream persistence adds ${ms(added)} ms to the relay p99 (target < 2 ms: ${met(added < 2)})`)
  }
  console.log(`\nSession starts (${SESSIONS} new sessions at once, one turn each, shell fake CLI)\n`)
  console.log('| scenario | sessions/s |')
  console.log('|---|---:|')
  for (const [name, perSecond] of starts) console.log(`| ${name} | ${perSecond.toLocaleString('en')} |`)
  console.log(
    `\nReplay of ${REPLAY_EVENTS.toLocaleString('en')} stored events to a resuming WebSocket client (NATS + JetStream): ${replay.toLocaleString('en')} events/s (target ≥ 20,000: ${met(replay >= 20_000)})`,
  )
}

await main()
