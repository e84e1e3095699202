/**
 * Load (issue 16, "Tests and measures"): bursts of new sessions and a steady
 * stream of them, with a short idle timeout so CLIs are reaped while others
 * start. Real processes on loopback, the shell fake CLI (tiny-claude.sh): the
 * checks are about the service (placement, claims, idle reaps, process-table
 * scans, the event log), and a Node fake's start cost would swamp two cores.
 *
 * Checked every time: the service does not crash; every turn ends in exactly
 * one end event, and it is `completed` (the fake CLI never fails, no limit is
 * configured that could refuse a turn, `runner.max_sessions` is above the
 * load: any error is the service's); replay from `last_seq` 0 equals what was
 * delivered live. Speed is measured by `npm run bench`, not asserted here.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { startCluster, type Cluster } from '../fixtures/cluster.ts'
import { atRate, LoadClient, replayFromStart, rssMiB, TINY_CLAUDE, type LoadTurn } from '../fixtures/load.ts'
import { startOwnNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { untilNoProcessUnder } from '../fixtures/processes.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'

type Msg = Record<string, unknown>

const BURST = 300
const RATE = 20
const RATE_SECONDS = 60
/** Connections the load is spread over (sessions round-robin). */
const CONNECTIONS = 20
/** How long the last turn of a load may take to end before it counts as lost. */
const END_TIMEOUT_MS = 60_000
/** How long the CLIs of a load may take to be reaped once idle (`idle_timeout` 1 s, then the stop grace of 1 s at most). */
const REAP_TIMEOUT_MS = 30_000
/**
 * RSS bound of the dev service at the end of 1,200 sessions at 20/s. Measured
 * on the 2-core machine (Node 24, 2026-11-24): about 190 MiB just started,
 * 290–380 MiB after the 1,200 sessions (the runs shared the cores with other
 * work). 600 MiB leaves more than 50% headroom over the highest; the failure
 * it is there for is of another size (issue 16: a client's buffers took a
 * gateway to 2 GB).
 */
const RSS_BOUND_MIB = 600

let dir: string | undefined
let service: ServiceProcess | undefined
let nats: Required<NatsFixture> | undefined
let cluster: Cluster | undefined
const clients: LoadClient[] = []

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  await service?.stop('SIGKILL')
  await cluster?.stop()
  await nats?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = service = cluster = nats = undefined
})

/**
 * A dev-mode service process with the shell fake CLI and CLIs reaped after 1 s idle. Open files: 4,096 at most;
 * each sandboxed session holds about 4 descriptors, 8 while it starts, so 300 at once need more than the usual
 * 1,024 (the crash at 1,024 with a few sessions is many-reaps.test.ts's).
 */
async function startDev(): Promise<ServiceProcess> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ar-load-'))
  const config = {
    server: { port: 0, shutdown_grace: '1s' },
    engine: { ...TINY_CLAUDE, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, idle_timeout: '1s', stop_grace: '1s' },
    session: { work_dir: devSessions(), marker_dir: path.join(dir, 'markers') },
    // Above the load: a session refused for room would be this test's doing, not the service's.
    runner: { max_sessions: 2_000 },
    log: { level: 'info' },
  }
  return startServiceProcess('dev', config, dir, {}, { maxOpenFiles: 4096 })
}

/** The dev service's session sandboxes: where its CLIs run. */
function devSessions(): string {
  return path.join(dir!, 'sessions')
}

async function open(wsUrl: string): Promise<LoadClient> {
  const client = await LoadClient.open(wsUrl, CONNECTIONS)
  clients.push(client)
  return client
}

function wsUrlOf(process: ServiceProcess): string {
  return process.address!.replace('http', 'ws') + '/ws/v1/agent'
}

function sample<T>(items: T[], n = 3): string {
  return JSON.stringify(items.slice(0, n))
}

/** Every turn ended exactly once, with `completed`. `log` is the service's output for failure messages. */
function expectEachTurnCompletedOnce(turns: LoadTurn[], log: () => string): void {
  const lost = turns.filter((turn) => turn.ends.length === 0)
  expect(lost.length, `${lost.length} of ${turns.length} turns never ended (lost), e.g. ${sample(lost.map((t) => t.requestId))}\n${log().slice(-3_000)}`).toBe(
    0,
  )
  const twice = turns.filter((turn) => turn.ends.length > 1)
  expect(twice.length, `${twice.length} turns ended more than once, e.g. ${sample(twice.map((t) => t.ends))}`).toBe(0)
  // Must be `completed`: nothing here may legitimately fail a turn (see the file comment).
  const failed = turns.filter((turn) => turn.ends[0]!.event !== 'completed')
  expect(failed.length, `${failed.length} of ${turns.length} turns ended other than completed, e.g. ${sample(failed.map((t) => t.ends[0]))}`).toBe(0)
}

/** The live events of each session have distinct, rising sequence numbers; a replay from 0 gives exactly them again. */
async function expectReplayEqualsLive(wsUrl: string, client: LoadClient, sessionIds: string[]): Promise<void> {
  const untilSeq = new Map<string, number>()
  for (const id of sessionIds) {
    const live = client.eventsOf(id)
    const seqs = live.map((event) => event.seq)
    expect(
      seqs.every((seq) => typeof seq === 'number'),
      `${id}: a live event without seq: ${sample(live)}`,
    ).toBe(true)
    expect(seqs, `${id}: live sequences not rising`).toEqual([...new Set(seqs as number[])].sort((a, b) => a - b))
    untilSeq.set(id, seqs.at(-1) as number)
  }
  const replayed = await replayFromStart(wsUrl, untilSeq, 30_000)
  const differ: { session: string; live: Msg[]; replayed: Msg[] }[] = []
  for (const id of sessionIds) {
    const live = client.eventsOf(id)
    // Same events, same fields (a replay from JetStream is parsed again, so its keys may come in another order).
    if (!isDeepStrictEqual(replayed.get(id), live)) differ.push({ session: id, live, replayed: replayed.get(id) ?? [] })
  }
  expect(differ.length, `${differ.length} of ${sessionIds.length} sessions replay differently from what was delivered live, e.g. ${sample(differ, 1)}`).toBe(0)
}

async function expectAlive(process: ServiceProcess): Promise<void> {
  expect({ exitCode: process.child.exitCode, signal: process.child.signalCode }, process.output().slice(-3_000)).toEqual({ exitCode: null, signal: null })
  expect((await fetch(`${process.address}/health/live`)).status).toBe(200)
}

describe('load', () => {
  it(`load - a burst of ${BURST} new sessions, then a second turn each after every CLI was reaped: no crash, each turn completes once, replay equals live`, async () => {
    service = await startDev()
    const wsUrl = wsUrlOf(service)
    const client = await open(wsUrl)
    const ids = Array.from({ length: BURST }, (_, i) => `burst-${i}`)

    const first = ids.map((id) => client.execute(id, 'first', `${id}/1`))
    await client.waitForEnds(first, END_TIMEOUT_MS)
    expectEachTurnCompletedOnce(first, service.output)
    // Every CLI is idle now and is reaped about 1 s later, all together (process-table scans at once).
    await untilNoProcessUnder(devSessions(), REAP_TIMEOUT_MS, service.output)
    await expectAlive(service)

    // The second turns resume conversations whose CLIs are gone.
    const second = ids.map((id) => client.execute(id, 'second', `${id}/2`))
    await client.waitForEnds(second, END_TIMEOUT_MS)
    expectEachTurnCompletedOnce(second, service.output)
    await untilNoProcessUnder(devSessions(), REAP_TIMEOUT_MS, service.output)
    await expectAlive(service)
    expect(client.openConnections()).toBe(CONNECTIONS)
    expect(client.stray).toEqual([])

    await expectReplayEqualsLive(wsUrl, client, ids)
  }, 150_000)

  it(`load - ${RATE} new sessions per second for ${RATE_SECONDS} s: no crash, each turn completes once, replay equals live, RSS under ${RSS_BOUND_MIB} MiB`, async () => {
    service = await startDev()
    const wsUrl = wsUrlOf(service)
    const client = await open(wsUrl)
    const pid = service.child.pid!
    const atStart = await rssMiB(pid)
    let peak = 0
    const sampler = setInterval(
      () =>
        void rssMiB(pid).then(
          (mib) => (peak = Math.max(peak, mib)),
          () => {},
        ),
      500,
    )
    const turns: LoadTurn[] = []
    try {
      await atRate(RATE, RATE_SECONDS * 1000, (i) => turns.push(client.execute(`steady-${i}`, `hello ${i}`, `steady-${i}`)))
      await client.waitForEnds(turns, END_TIMEOUT_MS)
    } finally {
      clearInterval(sampler)
    }
    expect(turns).toHaveLength(RATE * RATE_SECONDS)
    expectEachTurnCompletedOnce(turns, service.output)
    // The last CLIs are reaped.
    await untilNoProcessUnder(devSessions(), REAP_TIMEOUT_MS, service.output)
    await expectAlive(service)
    expect(client.openConnections()).toBe(CONNECTIONS)
    expect(client.stray).toEqual([])

    const rss = await rssMiB(pid)
    console.log(
      `load - ${turns.length} sessions at ${RATE}/s: service RSS ${atStart.toFixed(0)} MiB at start, ${rss.toFixed(0)} MiB at the end, ${Math.max(peak, rss).toFixed(0)} MiB at most`,
    )
    expect(rss, `service RSS at the end, MiB (peak ${peak.toFixed(0)})`).toBeLessThan(RSS_BOUND_MIB)

    await expectReplayEqualsLive(
      wsUrl,
      client,
      turns.map((turn) => turn.sessionId),
    )
  }, 180_000)

  it(`load - a burst of ${BURST} new sessions on gateway + 2 runners over NATS: each turn completes once, none lost, replay equals live`, async () => {
    nats = await startOwnNats()
    cluster = await startCluster(nats, {
      gateways: 1,
      runners: 2,
      engine: { ...TINY_CLAUDE, idle_timeout: '1s' },
      // The product's default lease (the fixture's 4 s is for fast failover tests): a runner starved of CPU
      // for 3 s on two shared cores fences itself and ends its turns with RUNNER_LOST, which is failover, not load.
      overrides: { runner: { max_sessions: 1_000 }, state: { lease_ttl: '10s' } },
    })
    const wsUrl = cluster.wsUrl(0)
    const client = await open(wsUrl)
    const ids = Array.from({ length: BURST }, (_, i) => `nats-burst-${i}`)
    const turns = ids.map((id) => client.execute(id, 'hello', id))
    await client.waitForEnds(turns, END_TIMEOUT_MS)
    const log = () => [...cluster!.gateways, ...cluster!.runners].map((p) => p.output().slice(-1_500)).join('\n---\n')
    expectEachTurnCompletedOnce(turns, log)
    // Reaps on both runners at once; both runners and the gateway live on.
    await untilNoProcessUnder(cluster.config.session!.work_dir as string, REAP_TIMEOUT_MS, log)
    for (const process of [...cluster.gateways, ...cluster.runners]) {
      expect({ exitCode: process.child.exitCode, signal: process.child.signalCode }, process.output().slice(-3_000)).toEqual({ exitCode: null, signal: null })
    }
    expect(client.stray).toEqual([])
    await expectReplayEqualsLive(wsUrl, client, ids)
  }, 150_000)
})
