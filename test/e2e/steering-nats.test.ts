import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { claudeRow } from './engines/claude.ts'
import type { EngineFixture } from './engines/row.ts'

/**
 * Steering in production mode: gateways and a runner as separate processes
 * over NATS with JetStream, the real Claude Code CLI. A pending request is an
 * event in the session's stream: it outlives the gateway it was first seen
 * through, and the first reply wins across gateways.
 */
type Msg = Record<string, unknown>
const TURN_MS = 90_000
const wsUrl = (gateway: ServiceProcess) => gateway.address!.replace('http', 'ws') + '/ws/v1/agent'
const isEnd = (msg: Msg) => msg.event === 'completed' || msg.event === 'stopped' || (msg.event === 'error' && msg.tool === undefined)

describe('steering - gateways and a runner over NATS', () => {
  let nats: NatsFixture
  let fixture: EngineFixture
  let dir: string
  let config: Record<string, unknown>
  let runner: ServiceProcess
  let gatewayA: ServiceProcess
  let gatewayB: ServiceProcess
  const clients: WsClient[] = []

  beforeAll(async () => {
    nats = await startNats()
    fixture = await claudeRow.setup()
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-steering-nats-'))
    config = {
      server: { port: 0 },
      engine: { default: 'claude', approval: 'ask', stop_grace: '2s' },
      engines: [fixture.config],
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      nats: { url: nats.url, prefix: `steer-${process.pid}-${Date.now()}` },
    }
    runner = await startServiceProcess('runner', config, dir)
    ;[gatewayA, gatewayB] = await Promise.all([startServiceProcess('gateway', config, dir), startServiceProcess('gateway', config, dir)])
  }, 120_000)
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await Promise.all([gatewayA?.stop(), gatewayB?.stop()])
    await runner?.stop()
    await fixture?.stop()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  async function connect(gateway: ServiceProcess) {
    const client = await WsClient.connect(wsUrl(gateway))
    clients.push(client)
    return client
  }
  const canary = (sessionId: string) => path.join(dir, 'sessions', sessionId, 'canary')

  it('nats steering - a request seen through a gateway that then dies is answered through another, over HTTP; the tool runs', async () => {
    const sessionId = 'steer-crash'
    const first = await connect(gatewayA)
    first.send({ type: 'execute', request_id: 'x', session_id: sessionId, prompt: 'run: touch canary' })
    const request = (await first.event('permission_request', sessionId, TURN_MS)).permission as { id: string }
    await gatewayA.stop('SIGKILL')
    // The other gateway knows nothing of the first: the request comes from the runner and the stream.
    const pending = await (await fetch(`${gatewayB.address}/v1/sessions/${sessionId}/pending`)).json()
    expect(pending).toMatchObject({ permissions: [{ id: request.id, tool: { name: 'Bash' } }], questions: [] })
    const second = await connect(gatewayB)
    second.send({ type: 'attach', session_id: sessionId, last_seq: 0 })
    expect(((await second.event('permission_request', sessionId)).permission as { id: string }).id).toBe(request.id)
    const reply = await fetch(`${gatewayB.address}/v1/sessions/${sessionId}/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ permission_id: request.id, decision: 'allow_once' }),
    })
    expect(reply.status).toBe(200)
    expect(await second.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === request.id)).toMatchObject({
      decision: 'allow_once',
      source: 'client',
      by: 'http',
    })
    expect(await second.next((msg) => msg.session_id === sessionId && isEnd(msg), TURN_MS)).toMatchObject({ event: 'completed' })
    expect(existsSync(canary(sessionId))).toBe(true)
    gatewayA = await startServiceProcess('gateway', config, dir)
  })

  it('nats steering - replies racing through two gateways: exactly one counts, the other is ALREADY_ANSWERED', async () => {
    const sessionId = 'steer-race'
    const [viaA, viaB] = await Promise.all([connect(gatewayA), connect(gatewayB)])
    viaA.send({ type: 'execute', request_id: 'r', session_id: sessionId, prompt: 'run: touch canary' })
    const request = (await viaA.event('permission_request', sessionId, TURN_MS)).permission as { id: string }
    viaB.send({ type: 'attach', session_id: sessionId })
    viaA.send({ type: 'permission_reply', request_id: 'a', session_id: sessionId, permission_id: request.id, decision: 'deny' })
    viaB.send({ type: 'permission_reply', request_id: 'b', session_id: sessionId, permission_id: request.id, decision: 'allow_once' })
    const resolved = await viaB.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === request.id)
    await viaA.next((msg) => msg.session_id === sessionId && isEnd(msg), TURN_MS)
    const refusals = [...viaA.messages, ...viaB.messages].filter((msg) => (msg.request_id === 'a' || msg.request_id === 'b') && msg.event === 'error')
    expect(refusals.map((msg) => (msg.error as { code: string }).code)).toEqual(['ALREADY_ANSWERED'])
    expect(existsSync(canary(sessionId))).toBe(resolved.decision === 'allow_once')
  })
})
