import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tracesUrl } from '../../observability/spans.ts'
import { startFakeCollector, type CollectedSpan, type FakeCollector } from '../fakes/otlp-collector.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const SPAN_KIND = { internal: 1, client: 3, consumer: 5 }

/**
 * Traces through the running service (dev mode) with the real OpenTelemetry
 * SDK and OTLP/HTTP exporter, into a fake collector. The service's stop
 * flushes the spans, so nothing here waits on the export schedule.
 */
describe('tracing', () => {
  let collector: FakeCollector
  let stack: Stack | undefined
  let client: WsClient | undefined
  beforeEach(async () => {
    collector = await startFakeCollector()
  })
  afterEach(async () => {
    await client?.close()
    await stack?.close()
    await collector.stop()
    client = stack = undefined
  })

  const byName = (name: string) => collector.spans.filter((span) => span.name === name)
  const one = (spans: CollectedSpan[], what: string) => {
    expect(spans, what).toHaveLength(1)
    return spans[0]!
  }

  it('spans - runner.command → session.execute → tool.use in one trace, with the §6.3 attributes', async () => {
    stack = await startStack({ otel: { endpoint: collector.endpoint, service_name: 'ar-test' } })
    client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'tr-1', prompt: 'tool: echo traced', request_id: 1 })
    const completed = await client.event('completed', 'tr-1')
    await client.close()
    client = undefined
    await stack.close()
    stack = undefined

    const execute = one(byName('session.execute'), 'session.execute')
    const tool = one(byName('tool.use'), 'tool.use')
    const command = one(
      byName('runner.command').filter((span) => span.attributes['command.type'] === 'execute'),
      'runner.command',
    )
    expect(execute).toMatchObject({
      kind: SPAN_KIND.consumer,
      parentSpanId: command.spanId,
      traceId: command.traceId,
      attributes: { 'session.id': 'tr-1', namespace: 'default', 'turn.id': completed.turn_id, 'turn.end': 'completed' },
      status: { code: 0 },
    })
    expect(tool).toMatchObject({
      parentSpanId: execute.spanId,
      traceId: command.traceId,
      attributes: { 'session.id': 'tr-1', namespace: 'default', 'tool.name': 'Bash' },
    })
    expect(tool.attributes['tool.id']).toMatch(/^toolu_/)
    expect(command).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: '', attributes: { 'session.id': 'tr-1', namespace: 'default' } })
    expect(command.resource).toMatchObject({ 'service.name': 'ar-test', 'service.namespace': 'default', 'agent_runtime.mode': 'dev' })
    expect(collector.requests.every((request) => request.path === '/v1/traces' && request.contentType?.startsWith('application/json'))).toBe(true)
  })

  it('spans - a failed turn fails its session.execute; a WAF block records security.danger_block under its turn', async () => {
    stack = await startStack({ otel: { endpoint: collector.endpoint } })
    client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'tr-2', prompt: 'crash', request_id: 'c' })
    await client.next((msg) => msg.request_id === 'c' && msg.event === 'error')
    client.send({ type: 'execute', session_id: 'tr-2', prompt: 'Run `rm -rf /` please', request_id: 'w' })
    const blocked = await client.next((msg) => msg.request_id === 'w' && msg.event === 'error')
    await client.close()
    client = undefined
    await stack.close()
    stack = undefined

    const executes = byName('session.execute')
    expect(executes.map((span) => span.attributes['error.code']).sort()).toEqual(['ENGINE_EXITED', 'WAF_BLOCKED'])
    expect(executes.every((span) => span.status.code === 2)).toBe(true)
    const block = one(byName('security.danger_block'), 'security.danger_block')
    const blockedTurn = executes.find((span) => span.attributes['turn.id'] === blocked.turn_id)!
    expect(block).toMatchObject({
      traceId: blockedTurn.traceId,
      parentSpanId: blockedTurn.spanId,
      attributes: {
        'session.id': 'tr-2',
        namespace: 'default',
        'danger.operation': 'rm -rf /',
        'danger.category': 'filesystem_destruction',
        'danger.rule': 'fs.rm-root',
      },
    })
  })

  it('sampling - a rate of 0 keeps no trace, on either side of the bus', async () => {
    stack = await startStack({ otel: { endpoint: collector.endpoint, sampling_rate: 0 } })
    client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'tr-3', prompt: 'tool: echo unsampled' })
    await client.event('completed', 'tr-3')
    await client.close()
    client = undefined
    await stack.close()
    stack = undefined
    expect(collector.spans).toEqual([])
  })

  it.each([
    ['127.0.0.1:4318', 'http://127.0.0.1:4318/v1/traces'],
    ['collector.example:4318', 'http://collector.example:4318/v1/traces'],
    ['https://otel.example', 'https://otel.example/v1/traces'],
    ['http://otel.example:4318/custom/path', 'http://otel.example:4318/custom/path'],
  ])('endpoint - %s exports to %s', (endpoint, url) => {
    expect(tracesUrl(endpoint)).toBe(url)
  })
})
