import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeCollector, type FakeCollector } from '../fakes/otlp-collector.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { sample, scrape } from '../observability/prometheus.ts'

/**
 * Gateway and runner as separate processes over NATS, both tracing to one
 * collector (OTEL_ENDPOINT): a turn is one trace across both processes, and
 * each process's /metrics counts its own part.
 */
describe('observability across processes', () => {
  let nats: NatsFixture
  let collector: FakeCollector
  let dir: string
  let gateway: ServiceProcess | undefined
  let runner: ServiceProcess | undefined
  let client: WsClient | undefined

  beforeAll(async () => {
    nats = await startNats()
    collector = await startFakeCollector()
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-obs-e2e-'))
    const config = {
      server: { port: 0 },
      runner: { http_port: 0 },
      engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') } },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      nats: { url: nats.url, prefix: `obs-e2e-${process.pid}-${Date.now()}` },
    }
    runner = await startServiceProcess('runner', config, dir, { OTEL_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: 'ar-runner' })
    gateway = await startServiceProcess('gateway', config, dir, { OTEL_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: 'ar-gateway' })
  })

  afterAll(async () => {
    await client?.close()
    await gateway?.stop()
    await runner?.stop()
    await collector?.stop()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('processes - one turn: metrics in the process that did the work, one trace across both', async () => {
    client = await WsClient.connect(gateway!.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', session_id: 'obs-1', prompt: 'tool: echo across', request_id: 1 })
    const completed = await client.event('completed', 'obs-1')
    await client.close()
    client = undefined

    // The runner's own probe and metrics server (runner.http_port).
    expect(await (await fetch(`${runner!.address}/health/ready`)).json()).toEqual({ status: 'ready', checks: { engine: true, pool: true }, sandbox: 'bwrap' })
    const atRunner = await scrape(runner!.address!)
    const atGateway = await scrape(gateway!.address!)
    expect(sample(atRunner, 'service_tools_invoked', { tool: 'Bash' })).toBe(1)
    expect(sample(atRunner, 'service_sessions_total', { kind: 'new' })).toBe(1)
    expect(sample(atGateway, 'service_tools_invoked', { tool: 'Bash' })).toBeUndefined()
    expect(sample(atGateway, 'service_request_duration_seconds_count', { method: 'WS', route: '/ws/v1/agent#execute', status: '200' })).toBe(1)

    // Stopping flushes each process's spans to the collector.
    expect(await gateway!.stop()).toBe(0)
    expect(await runner!.stop()).toBe(0)
    const execute = collector.spans.find((span) => span.name === 'session.execute' && span.attributes['turn.id'] === completed.turn_id)
    expect(execute, `spans: ${collector.spans.map((span) => `${span.resource['service.name']}/${span.name}`).join(', ')}`).toBeDefined()
    const command = collector.spans.find((span) => span.spanId === execute!.parentSpanId)
    expect(command).toMatchObject({ name: 'runner.command', traceId: execute!.traceId, attributes: { 'command.type': 'execute', 'session.id': 'obs-1' } })
    expect(command!.resource).toMatchObject({ 'service.name': 'ar-gateway', 'agent_runtime.mode': 'gateway' })
    expect(execute!.resource).toMatchObject({ 'service.name': 'ar-runner', 'agent_runtime.mode': 'runner' })
    expect(execute!.attributes).toMatchObject({ 'session.id': 'obs-1', namespace: 'default', 'turn.end': 'completed' })
    const tool = collector.spans.find((span) => span.name === 'tool.use' && span.parentSpanId === execute!.spanId)
    expect(tool).toMatchObject({ traceId: execute!.traceId, attributes: { 'tool.name': 'Bash', 'session.id': 'obs-1' } })
    expect(tool!.resource['service.name']).toBe('ar-runner')
  })
})
