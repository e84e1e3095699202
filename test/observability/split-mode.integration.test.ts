import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { bwrapWorks } from '../fixtures/escape-corpus.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { sample, scrape } from './prometheus.ts'

/**
 * Gateway and runner as two services over a private NATS (in one test
 * process, each with its own registry): readiness follows the runner pool,
 * the runner serves its own probes and /metrics, and each process counts
 * only what it does.
 */
describe('split mode - gateway and runner over NATS', () => {
  let nats: NatsFixture
  let gateway: Stack
  let runner: Stack | undefined
  let client: WsClient | undefined
  const prefix = `obs-${process.pid}-${Date.now()}`

  beforeAll(async () => {
    nats = await startPrivateNats()
    gateway = await startStack({ nats: { url: nats.url, prefix } }, 'gateway')
  })
  afterAll(async () => {
    await client?.close()
    await runner?.close()
    await gateway?.close()
    await nats?.stop()
  })

  const ready = async (url: string) => {
    const response = await fetch(`${url}/health/ready`)
    return { status: response.status, body: await response.json() }
  }

  it('ready - the gateway is not ready without a runner and ready once one answers; the runner serves its own probes', async () => {
    expect(await ready(gateway.url)).toEqual({ status: 503, body: { status: 'not_ready', checks: { engine: false, pool: false } } })
    runner = await startStack({ nats: { url: nats.url, prefix }, runner: { http_port: 0 } }, 'runner')
    // A failed check is cached for a second: the next probes see the runner.
    await vi.waitFor(async () => expect(await ready(gateway.url)).toEqual({ status: 200, body: { status: 'ready', checks: { engine: true, pool: true } } }), {
      timeout: 10_000,
      interval: 200,
    })
    // The runner's own server: runner.http_port.
    expect(runner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    // The runner says which session sandbox it runs; the gateway runs no session.
    expect(await ready(runner.url)).toEqual({
      status: 200,
      body: { status: 'ready', checks: { engine: true, pool: true }, sandbox: bwrapWorks ? 'bwrap' : 'none' },
    })
    expect(await (await fetch(`${runner.url}/health/live`)).json()).toEqual({ status: 'alive' })
    expect(await (await fetch(`${runner.url}/health`)).json()).toMatchObject({ status: 'healthy' })
  })

  it('metrics - each process exposes what it does: the runner sessions and tools, the gateway requests', async () => {
    client = await WsClient.connect(gateway.wsUrl)
    client.send({ type: 'execute', session_id: 'split-1', prompt: 'tool: echo split', request_id: 'x' })
    await client.event('completed', 'split-1')

    const atRunner = await scrape(runner!.url)
    const atGateway = await scrape(gateway.url)
    expect(sample(atRunner, 'service_tools_invoked', { tool: 'Bash' })).toBe(1)
    expect(sample(atRunner, 'service_sessions_total', { kind: 'new' })).toBe(1)
    expect(sample(atRunner, 'service_sessions_active')).toBe(1)
    expect(sample(atRunner, 'service_request_duration_seconds_count', { method: 'WS', route: '/ws/v1/agent#execute' })).toBeUndefined()

    expect(sample(atGateway, 'service_request_duration_seconds_count', { method: 'WS', route: '/ws/v1/agent#execute', status: '200' })).toBe(1)
    expect(sample(atGateway, 'service_tools_invoked', { tool: 'Bash' })).toBeUndefined()
    expect(sample(atGateway, 'service_sessions_total', { kind: 'new' })).toBe(0)
    expect(sample(atGateway, 'service_sessions_active')).toBe(0)
    // Both expose the process metrics of their own process.
    expect(sample(atRunner, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
  })

  it('ready - the gateway turns not ready when the last runner leaves', async () => {
    await client?.close()
    client = undefined
    await runner!.close()
    runner = undefined
    await vi.waitFor(async () => expect((await ready(gateway.url)).status).toBe(503), { timeout: 15_000, interval: 200 })
  })
})
