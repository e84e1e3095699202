/**
 * Production mode under faults: real processes (two gateways, two runners), a
 * real nats-server with file storage, the fake CLI. Nothing may be lost.
 */
import { describe, expect, it, vi } from 'vitest'
import { clusterPerTest } from '../fixtures/cluster.ts'
import { ancestorAmong, fakeCliIn, processesUnder } from '../fixtures/processes.ts'
import { TINY_CLAUDE } from '../fixtures/load.ts'

type Msg = Record<string, unknown>

const clusters = clusterPerTest()
const connect = clusters.connect

/** The turn's events, each once and in order: sequences rise by one from the first to the last. */
function expectExactlyOnceInOrder(events: Msg[], answers: number): void {
  const seqs = events.map((event) => event.seq as number)
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i))
  expect(events.filter((event) => event.event === 'answer')).toHaveLength(answers)
  expect(events.at(-1)!.event).toBe('completed')
}

describe('faults', () => {
  it('fault - the gateway a client streams from is killed mid-turn: the client resumes on the other gateway and misses nothing', async () => {
    const { cluster } = await clusters.start({ gateways: 2, runners: 2 })
    const first = await connect(cluster.wsUrl(0))
    first.send({ type: 'execute', session_id: 'gw-kill', prompt: 'stamped: 300 100', request_id: 1 })
    await vi.waitFor(() => expect(first.eventsOf('gw-kill').filter((e) => e.event === 'answer').length).toBeGreaterThanOrEqual(60), { timeout: 20_000 })
    await cluster.kill(cluster.gateways[0]!)
    const before = first.eventsOf('gw-kill')
    const lastSeq = before.at(-1)!.seq as number

    const second = await connect(cluster.wsUrl(1, `session_id=gw-kill&last_seq=${lastSeq}`))
    await second.event('completed', 'gw-kill', 30_000)
    expectExactlyOnceInOrder([...before, ...second.eventsOf('gw-kill')], 300)
  })

  it('fault - the runner is killed mid-turn: the turn ends in an error, its processes are gone, the next execute continues on the other runner', async () => {
    const { cluster } = await clusters.start({ gateways: 2, runners: 2 })
    const client = await connect(cluster.wsUrl(0))
    client.send({ type: 'execute', session_id: 'rn-kill', prompt: 'remember ALPHA', request_id: 'a' })
    await client.next((msg) => msg.request_id === 'a' && msg.event === 'completed')
    client.send({ type: 'execute', session_id: 'rn-kill', prompt: 'sleep: 120', request_id: 'b' })
    await client.next((msg) => msg.request_id === 'b' && msg.event === 'tool_use')

    const sandbox = cluster.sandbox('rn-kill')
    const runnerPids = cluster.runners.map((runner) => runner.child.pid!)
    const owner = await ancestorAmong(await fakeCliIn(sandbox), runnerPids)
    const victim = cluster.runners.find((runner) => runner.child.pid === owner)!
    const survivor = cluster.runners.find((runner) => runner !== victim)!
    expect(victim).toBeDefined()
    const killedAt = Date.now()
    await cluster.kill(victim)

    const lost = await client.next((msg) => msg.request_id === 'b' && msg.event === 'error', 20_000)
    expect(lost).toMatchObject({ error: { code: 'RUNNER_LOST' } })
    expect(Date.now() - killedAt).toBeLessThan(15_000)
    await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 15_000 })

    client.send({ type: 'execute', session_id: 'rn-kill', prompt: 'recall', request_id: 'c' })
    const done = await client.next((msg) => msg.request_id === 'c' && (msg.event === 'completed' || msg.event === 'error'), 20_000)
    expect(done).toMatchObject({ event: 'completed', data: expect.stringContaining('remember ALPHA') })
    expect(await ancestorAmong(await fakeCliIn(sandbox), runnerPids)).toBe(survivor.child.pid)
  })

  it('fault - nats-server restarts mid-turn: everyone reconnects and no event of the turn is lost', async () => {
    const { nats, cluster } = await clusters.start({ gateways: 2, runners: 2 })
    const client = await connect(cluster.wsUrl(0))
    client.send({ type: 'execute', session_id: 'nats-restart', prompt: 'stamped: 400 100', request_id: 1 })
    await vi.waitFor(() => expect(client.eventsOf('nats-restart').filter((e) => e.event === 'answer').length).toBeGreaterThanOrEqual(80), { timeout: 20_000 })
    await nats.restart({ downMs: 1_000 })
    await client.event('completed', 'nats-restart', 60_000)
    expectExactlyOnceInOrder(client.eventsOf('nats-restart'), 400)
  })

  it('fault - 500 concurrent sessions across two gateways all complete, no event lost or doubled', async () => {
    // The production lease TTL, not the fixture's 4 s: 500 CLIs starting at once can stall a runner on two cores for
    // seconds, and a fenced runner ends its turns with RUNNER_LOST (test/runner/fence.test.ts), which is not what this measures.
    const { cluster } = await clusters.start({
      gateways: 2,
      runners: 2,
      engine: TINY_CLAUDE,
      overrides: { runner: { max_sessions: 400 }, state: { lease_ttl: '10s' } },
    })
    const perClient = 10
    const connections = await Promise.all(Array.from({ length: 50 }, (_, i) => connect(cluster.wsUrl(i % 2))))
    const sessions = connections.flatMap((client, c) => Array.from({ length: perClient }, (_, i) => ({ client, id: `load-${c}-${i}` })))
    for (const { client, id } of sessions) client.send({ type: 'execute', session_id: id, prompt: `hello ${id}`, request_id: id })
    await Promise.all(
      sessions.map(({ client, id }) =>
        client
          .next((msg) => msg.session_id === id && (msg.event === 'completed' || msg.event === 'error'), 120_000)
          .catch(() => {
            // Say which session did not end and what it did get, not the connection's last messages.
            const logs = [...cluster.gateways, ...cluster.runners].flatMap((service) =>
              service
                .output()
                .split('\n')
                .filter((line) => line.includes(id) || /"level":"(warn|error|fatal)"/.test(line)),
            )
            throw new Error(`session ${id} did not end within 120 s; its events: ${JSON.stringify(client.eventsOf(id))}; its log lines:\n${logs.join('\n')}`)
          }),
      ),
    )
    for (const { client, id } of sessions) {
      const events = client.eventsOf(id)
      expect(
        events.map((event) => event.event),
        `${id}: ${JSON.stringify(events)}`,
      ).toEqual(['answer', 'session_stats', 'completed'])
      expect(events[0]!.data).toBe('tiny answer 1')
      // Each event stored once: as many distinct sequences as events.
      expect(new Set(events.map((event) => event.seq)).size).toBe(events.length)
    }
    expect(sessions).toHaveLength(500)
  }, 180_000)
})
