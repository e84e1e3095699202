/** Any gateway serves any session: REST sessions and their history live in JetStream, not in one gateway. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCluster, type Cluster } from '../fixtures/cluster.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { WsClient } from '../fixtures/ws-client.ts'

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(base + path, {
    method,
    ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

describe('two gateways, one session', () => {
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

  it('rest - a session created and prompted on one gateway is found, with its messages, on the other', async () => {
    const [a, b] = cluster.gateways.map((gateway) => gateway.address!)
    const created = await call(a!, 'POST', '/session', { title: 'shared' })
    expect(created.status).toBe(200)
    const id = created.body.id as string
    const answered = await call(a!, 'POST', `/session/${id}/message`, { parts: [{ type: 'text', text: 'tool: echo across' }] })
    expect(answered.status).toBe(200)

    const found = await call(b!, 'GET', `/session/${id}`)
    expect(found).toMatchObject({ status: 200, body: { id, title: 'shared' } })
    const messages = await call(b!, 'GET', `/session/${id}/message`)
    expect(messages.status).toBe(200)
    expect(messages.body.map((m: any) => m.info.role)).toEqual(['user', 'assistant'])
    const tool = messages.body[1].parts.find((p: any) => p.type === 'tool')
    expect(tool).toMatchObject({ tool: 'Bash', state: { status: 'completed', output: 'across' } })
    expect((await call(b!, 'GET', '/session')).body.map((s: any) => s.id)).toContain(id)
  })

  it('websocket - a turn started through one gateway is followed through the other', async () => {
    const first = await WsClient.connect(cluster.wsUrl(0))
    const second = await WsClient.connect(cluster.wsUrl(1, 'session_id=ws-shared'))
    first.send({ type: 'execute', session_id: 'ws-shared', prompt: 'tool: echo both' })
    const [one, two] = await Promise.all([first.event('completed', 'ws-shared'), second.event('completed', 'ws-shared')])
    expect(two.seq).toBe(one.seq)
    expect(second.eventsOf('ws-shared').map((e) => e.event)).toEqual(first.eventsOf('ws-shared').map((e) => e.event))
    await Promise.all([first.close(), second.close()])
  })
})
