import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { ancestorAmong, processesUnder } from '../fixtures/processes.ts'
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
  let secondRunner: ServiceProcess
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
    ;[runner, secondRunner] = await Promise.all([startServiceProcess('runner', config, dir), startServiceProcess('runner', config, dir)])
    ;[gatewayA, gatewayB] = await Promise.all([startServiceProcess('gateway', config, dir), startServiceProcess('gateway', config, dir)])
  }, 120_000)
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await Promise.all([gatewayA?.stop(), gatewayB?.stop()])
    await Promise.all([runner?.stop(), secondRunner?.stop()])
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
    // From the start: the resolution may come before the attach takes effect.
    viaB.send({ type: 'attach', session_id: sessionId, last_seq: 0 })
    viaA.send({ type: 'permission_reply', request_id: 'a', session_id: sessionId, permission_id: request.id, decision: 'deny' })
    viaB.send({ type: 'permission_reply', request_id: 'b', session_id: sessionId, permission_id: request.id, decision: 'allow_once' })
    const resolved = await viaB.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === request.id)
    // The turn's own end (a refused reply is an error event of the session too).
    await viaA.next((msg) => msg.request_id === 'r' && isEnd(msg), TURN_MS)
    const refusals = [...viaA.messages, ...viaB.messages].filter((msg) => (msg.request_id === 'a' || msg.request_id === 'b') && msg.event === 'error')
    expect(refusals.map((msg) => (msg.error as { code: string }).code)).toEqual(['ALREADY_ANSWERED'])
    expect(existsSync(canary(sessionId))).toBe(resolved.decision === 'allow_once')
  })

  it("nats steering - the runner that asked dies: the turn ends RUNNER_LOST, and a late answer is refused clearly by the session's new owner", async () => {
    const sessionId = 'steer-owner-lost'
    const client = await connect(gatewayB)
    client.send({ type: 'execute', request_id: 'o', session_id: sessionId, prompt: 'run: touch canary' })
    const request = (await client.event('permission_request', sessionId, TURN_MS)).permission as { id: string }
    const [cli] = await processesUnder(path.join(dir, 'sessions', sessionId))
    const owner = await ancestorAmong(cli!, [runner.child.pid!, secondRunner.child.pid!])
    const victim = owner === runner.child.pid ? runner : secondRunner
    await victim.stop('SIGKILL')
    expect(await client.next((msg) => msg.session_id === sessionId && isEnd(msg), 30_000)).toMatchObject({ event: 'error', error: { code: 'RUNNER_LOST' } })
    client.send({ type: 'permission_reply', request_id: 'late', session_id: sessionId, permission_id: request.id, decision: 'allow_once' })
    const refused = await client.next((msg) => msg.request_id === 'late' && msg.event === 'error', 30_000)
    expect(refused).toMatchObject({ error: { code: 'PERMISSION_NOT_FOUND' } })
    expect((refused.error as { message: string }).message).toContain(request.id)
    expect(existsSync(canary(sessionId))).toBe(false)
  })
})
