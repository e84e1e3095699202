import { execFileSync } from 'node:child_process'
import { percentile } from './relay.ts'
import type { System } from './systems.ts'
import { rssBytes, SessionClient } from './wire.ts'

export interface IdleFigures {
  sessions: number
  /** Sessions started per second: each an execute on its own connected client, to its turn's end. */
  startsPerSecond: number
  /** p99 ms from an execute to its turn's end. */
  startP99Ms: number
  /** Resident memory each idle session (connected client, one finished turn, CLI reaped) holds. */
  gatewayBytesPerSession: number
  runnerBytesPerSession: number
}

export const IDLE = { sessions: 1_000, warm: 20, inFlight: 50, idleTimeout: '1s' }

/**
 * 1,000 sessions on one gateway, each with a connected client and one finished turn; the system's
 * CLIs are reaped after `IDLE.idleTimeout`. Memory per idle session is the growth of the gateway's and
 * the runner's RSS over a warmed-up baseline, divided by the sessions.
 */
export async function measureIdleSessions(system: System, cliName: string, log: (line: string) => void): Promise<IdleFigures> {
  const { sessions, warm, inFlight } = IDLE
  const warmClients = await Promise.all(Array.from({ length: warm }, () => SessionClient.connect(system.wsUrl)))
  await Promise.all(warmClients.map((c, i) => c.turn(`warm-${i}`, 'hello')))
  await Promise.all(warmClients.map((c) => c.close()))
  await cliProcessesGone(system, cliName)
  const gateway0 = rssBytes(system.gatewayPid)
  const runner0 = rssBytes(system.runnerPid ?? system.gatewayPid)
  const clients: SessionClient[] = []
  for (let i = 0; i < sessions; i += 100)
    clients.push(...(await Promise.all(Array.from({ length: Math.min(100, sessions - i) }, () => SessionClient.connect(system.wsUrl)))))
  try {
    const latencies: number[] = []
    let next = 0
    const started = performance.now()
    const worker = async () => {
      while (next < sessions) {
        const i = next++
        const sent = performance.now()
        await clients[i]!.turn(`idle-${i}`, 'hello')
        latencies.push(performance.now() - sent)
      }
    }
    await Promise.all(Array.from({ length: inFlight }, worker))
    const startsPerSecond = sessions / ((performance.now() - started) / 1000)
    await cliProcessesGone(system, cliName)
    const figures = {
      sessions,
      startsPerSecond,
      startP99Ms: percentile(
        latencies.sort((a, b) => a - b),
        99,
      ),
      gatewayBytesPerSession: (rssBytes(system.gatewayPid) - gateway0) / sessions,
      runnerBytesPerSession: (rssBytes(system.runnerPid ?? system.gatewayPid) - runner0) / sessions,
    }
    log(
      `${system.name}: ${sessions} idle sessions, ${Math.round(figures.gatewayBytesPerSession / 1024)} KB gateway, ${Math.round(figures.runnerBytesPerSession / 1024)} KB runner each`,
    )
    return figures
  } finally {
    for (let i = 0; i < clients.length; i += 100) await Promise.all(clients.slice(i, i + 100).map((c) => c.close()))
  }
}

/** Waits until the runner has no CLI left (every idle one reaped), then a moment for the frees to settle. */
async function cliProcessesGone(system: System, cliName: string): Promise<void> {
  const runner = system.runnerPid ?? system.gatewayPid
  const deadline = Date.now() + 30_000
  while (cliChildren(runner, cliName) > 0) {
    if (Date.now() > deadline) throw new Error(`${system.name}: CLIs still running 30 s after the last turn`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000))
}

/** The runner's child processes running the CLI (not its guardian). */
function cliChildren(pid: number, cliName: string): number {
  try {
    return execFileSync('pgrep', ['-P', String(pid), '-f', cliName], { encoding: 'utf8' })
      .trim()
      .split('\n').length
  } catch {
    return 0 // pgrep exits 1 when it finds none
  }
}
