import { percentile } from './relay.ts'
import type { System } from './systems.ts'
import { cpuSeconds, median, rssBytes, SessionClient, stampOf } from './wire.ts'

/** What one relay measured, each a median of `rounds` rounds. */
export interface RelayFigures {
  floodEventsPerSecond: number
  floodCpuMicros: number
  manyEventsPerSecond: number
  manyCpuMicros: number
  /** The gateway's resident memory after the 100 sessions' rounds. */
  manyGatewayRss: number
  pacedP99Ms: number
}

export const LOAD = { floodEvents: 20_000, sessions: 100, sessionEvents: 200, pacedEvents: 4_000, pacedRate: 2_000, rounds: 3 }

/**
 * The relay figures of one system: one session flooding, 100 sessions at
 * once, one session paced; a warm-up turn before each (CLI start, JIT), then
 * `rounds` measured rounds. CPU is the service's own (its processes, not the CLIs').
 */
export async function measureSystem(system: System, log: (line: string) => void): Promise<RelayFigures> {
  const { rounds } = LOAD
  const flood: { rate: number; cpu: number }[] = []
  const paced: number[] = []
  const many: { rate: number; cpu: number }[] = []
  const client = await SessionClient.connect(system.wsUrl)
  try {
    await client.turn('flood', 'burst: 2000')
    for (let round = 0; round < rounds; round++) flood.push(await floodRound(client, system))
    log(`${system.name}: flood ${Math.round(median(flood.map((r) => r.rate)))}/s`)
    await client.turn('paced', `stamped: 200 ${LOAD.pacedRate}`)
    for (let round = 0; round < rounds; round++) paced.push(await pacedRound(client))
    log(`${system.name}: paced p99 ${median(paced).toFixed(2)} ms`)
  } finally {
    await client.close()
  }
  const clients = await Promise.all(Array.from({ length: LOAD.sessions }, () => SessionClient.connect(system.wsUrl)))
  try {
    await Promise.all(clients.map((c, i) => c.turn(`many-${i}`, 'burst: 10')))
    for (let round = 0; round < rounds; round++) many.push(await manyRound(clients, system))
    log(`${system.name}: ${LOAD.sessions} sessions ${Math.round(median(many.map((r) => r.rate)))}/s`)
    const manyGatewayRss = rssBytes(system.gatewayPid)
    return {
      floodEventsPerSecond: median(flood.map((r) => r.rate)),
      floodCpuMicros: median(flood.map((r) => r.cpu)),
      manyEventsPerSecond: median(many.map((r) => r.rate)),
      manyCpuMicros: median(many.map((r) => r.cpu)),
      manyGatewayRss,
      pacedP99Ms: median(paced),
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()))
  }
}

/** Events/s from the first answer to the last; CPU µs per event over the turn. */
async function floodRound(client: SessionClient, system: System): Promise<{ rate: number; cpu: number }> {
  let first = 0
  let last = 0
  const cpu = cpuSeconds(system.pids)
  const count = await client.turn('flood', `burst: ${LOAD.floodEvents}`, () => {
    last = performance.now()
    if (first === 0) first = last
  })
  const used = cpuSeconds(system.pids) - cpu
  if (count !== LOAD.floodEvents) throw new Error(`${system.name}: ${count} of ${LOAD.floodEvents} answers`)
  return { rate: (count - 1) / ((last - first) / 1000), cpu: (used * 1e6) / count }
}

/** p99 ms from a CLI's stdout write to the client, lines written at a fixed rate. */
async function pacedRound(client: SessionClient): Promise<number> {
  const latencies: number[] = []
  await client.turn('paced', `stamped: ${LOAD.pacedEvents} ${LOAD.pacedRate}`, (text) => latencies.push(performance.timeOrigin + performance.now() - stampOf(text)))
  if (latencies.length !== LOAD.pacedEvents) throw new Error(`paced: ${latencies.length} of ${LOAD.pacedEvents} answers`)
  return percentile(latencies.sort((a, b) => a - b), 99)
}

/** Every session sends its turn at once: events/s from the first execute to the last end. */
async function manyRound(clients: SessionClient[], system: System): Promise<{ rate: number; cpu: number }> {
  const cpu = cpuSeconds(system.pids)
  const started = performance.now()
  const counts = await Promise.all(clients.map((c, i) => c.turn(`many-${i}`, `burst: ${LOAD.sessionEvents}`)))
  const seconds = (performance.now() - started) / 1000
  const used = cpuSeconds(system.pids) - cpu
  const events = counts.reduce((a, b) => a + b, 0)
  if (events !== LOAD.sessions * LOAD.sessionEvents) throw new Error(`${system.name}: ${events} of ${LOAD.sessions * LOAD.sessionEvents} answers`)
  return { rate: events / seconds, cpu: (used * 1e6) / events }
}
