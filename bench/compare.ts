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
 * The relay figures of several systems, measured in turns: each round of one
 * session flooding, then of one session paced, goes through every system
 * before the next round, so a change in the machine's load falls on all of
 * them alike; then 100 sessions at once, one system after another (100 CLIs
 * each; each system is stopped once measured, so their CLIs go with it). A
 * warm-up turn comes first (CLI start, JIT), then `rounds` rounds.
 * CPU is the service's own (its processes, not the CLIs').
 */
export async function measureSystems(systems: readonly System[], log: (line: string) => void): Promise<RelayFigures[]> {
  const { rounds } = LOAD
  const clients = await Promise.all(systems.map((system) => SessionClient.connect(system.wsUrl)))
  const flood = systems.map(() => [] as { rate: number; cpu: number }[])
  const paced = systems.map(() => [] as number[])
  try {
    for (const client of clients) {
      await client.turn('flood', 'burst: 2000')
      await client.turn('paced', `stamped: 200 ${LOAD.pacedRate}`)
    }
    for (let round = 0; round < rounds; round++) {
      for (const [i, system] of systems.entries()) flood[i]!.push(await floodRound(clients[i]!, system))
    }
    for (let round = 0; round < rounds; round++) {
      for (const i of systems.keys()) paced[i]!.push(await pacedRound(clients[i]!))
    }
  } finally {
    await Promise.all(clients.map((client) => client.close()))
  }
  const figures: RelayFigures[] = []
  for (const [i, system] of systems.entries()) {
    const many = await measureMany(system)
    await system.stop()
    figures.push({
      floodEventsPerSecond: median(flood[i]!.map((r) => r.rate)),
      floodCpuMicros: median(flood[i]!.map((r) => r.cpu)),
      pacedP99Ms: median(paced[i]!),
      ...many,
    })
    log(
      `${system.name}: flood ${Math.round(figures[i]!.floodEventsPerSecond)}/s, paced p99 ${figures[i]!.pacedP99Ms.toFixed(2)} ms, ${LOAD.sessions} sessions ${Math.round(many.manyEventsPerSecond)}/s`,
    )
  }
  return figures
}

async function measureMany(system: System): Promise<Pick<RelayFigures, 'manyEventsPerSecond' | 'manyCpuMicros' | 'manyGatewayRss'>> {
  const clients = await Promise.all(Array.from({ length: LOAD.sessions }, () => SessionClient.connect(system.wsUrl)))
  try {
    await Promise.all(clients.map((c, i) => c.turn(`many-${i}`, 'burst: 10')))
    const many: { rate: number; cpu: number }[] = []
    for (let round = 0; round < LOAD.rounds; round++) many.push(await manyRound(clients, system))
    return {
      manyEventsPerSecond: median(many.map((r) => r.rate)),
      manyCpuMicros: median(many.map((r) => r.cpu)),
      manyGatewayRss: rssBytes(system.gatewayPid),
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
  await client.turn('paced', `stamped: ${LOAD.pacedEvents} ${LOAD.pacedRate}`, (text) =>
    latencies.push(performance.timeOrigin + performance.now() - stampOf(text)),
  )
  if (latencies.length !== LOAD.pacedEvents) throw new Error(`paced: ${latencies.length} of ${LOAD.pacedEvents} answers`)
  return percentile(
    latencies.sort((a, b) => a - b),
    99,
  )
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
