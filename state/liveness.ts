import type { Bus } from '../bus/mod.ts'
import { subjects } from '../contract/subjects.ts'
import type { RunnerLeases } from './registry.ts'

/** How long a runner may take to answer a ping before its lease decides. */
const PING_TIMEOUT_MS = 1_000

/**
 * Whether a runner is alive: it answers a ping, or it still holds its lease.
 * One that does not answer may just be cut off for a moment (a NATS restart);
 * taking its sessions then would run them twice, and it fences itself before
 * its lease can lapse (runner/lease.ts). Without leases (dev mode, tests) an
 * unanswered ping is death.
 */
export async function isRunnerAlive(bus: Bus, subjectPrefix: string, leases: RunnerLeases | undefined, runnerId: string): Promise<boolean> {
  try {
    await bus.request(subjects(subjectPrefix).runner(runnerId), JSON.stringify({ type: 'ping' }), { timeoutMs: PING_TIMEOUT_MS })
    return true
  } catch {
    return leases !== undefined && (await leases.get(runnerId)) !== undefined
  }
}
