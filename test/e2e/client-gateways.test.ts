/** The typed client (client/) against real processes: two gateways and a runner over NATS. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, type ServiceEvent } from '../../client/mod.ts'
import { startCluster, type Cluster } from '../fixtures/cluster.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startTcpProxy } from '../fixtures/tcp-proxy.ts'

describe('typed client - two gateways, one session', () => {
  let nats: NatsFixture
  let cluster: Cluster
  beforeAll(async () => {
    nats = await startNats()
    cluster = await startCluster(nats, { gateways: 2, runners: 1 })
  })
  afterAll(async () => {
    await cluster?.stop()
    await nats?.stop()
  })

  it('typed client - moved to the other gateway mid-turn, it resumes there: the turn whole, each stored event once', async () => {
    const [a, b] = cluster.gateways.map((gateway) => new URL(gateway.address!))
    const proxy = await startTcpProxy({ host: a!.hostname, port: Number(a!.port) })
    const client = await connect({ url: proxy.url, retry: { baseMs: 50 } })
    const received: ServiceEvent[] = []
    try {
      for await (const event of client.session('moved').execute('stamped: 40 20')) {
        received.push(event)
        if (received.length === 8) {
          proxy.retarget({ host: b!.hostname, port: Number(b!.port) })
          proxy.dropAll()
        }
      }
    } finally {
      client.close()
      await proxy.close()
    }
    const stored = received.filter((event) => event.seq !== undefined)
    const seqs = stored.map((event) => event.seq!)
    expect(proxy.drops).toBeGreaterThan(0)
    expect(received.at(-1)?.event).toBe('completed')
    expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => x - y))
    // No gap: from the turn's first stored event to its last, every sequence number.
    expect(seqs.at(-1)! - seqs[0]! + 1).toBe(seqs.length)
    expect(stored.filter((event) => event.event === 'answer')).toHaveLength(40)
  })
})
