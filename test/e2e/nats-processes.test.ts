import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

/** WebSocket → gateway process → real NATS → runner process → fake CLI. */
describe('gateway and runner as separate processes over NATS', () => {
  let nats: NatsFixture
  let dir: string
  let gateway: ServiceProcess
  let runner: ServiceProcess
  let client: WsClient | undefined

  beforeAll(async () => {
    nats = await startNats()
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-nats-e2e-'))
    const config = {
      server: { port: 0 },
      engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') } },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      // A prefix of this run only, in case NATS_URL points at a shared server.
      nats: { url: nats.url, prefix: `e2e-${process.pid}-${Date.now()}` },
    }
    runner = await startServiceProcess('runner', config, dir)
    gateway = await startServiceProcess('gateway', config, dir)
  })

  afterAll(async () => {
    await client?.close()
    await gateway?.stop()
    await runner?.stop()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('nats - a tool-using turn streams through both processes', async () => {
    client = await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', request_id: 1, session_id: 'nats-1', prompt: 'tool: echo over nats' })
    const completed = await client.event('completed', 'nats-1')
    expect(client.eventsOf('nats-1').map((msg) => msg.event)).toEqual(['thinking', 'answer', 'tool_use', 'tool_result', 'answer', 'session_stats', 'completed'])
    expect(client.eventsOf('nats-1').find((msg) => msg.event === 'tool_result')!.data).toBe('over nats')
    expect(completed).toMatchObject({ request_id: 1, stats: { turns: 1, tool_calls: 1 } })
  })

  it('nats - stop and version travel as commands too', async () => {
    client ??= await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', session_id: 'nats-2', prompt: 'sleep: 60' })
    await client.event('tool_use', 'nats-2')
    client.send({ type: 'stop', session_id: 'nats-2', request_id: 'halt' })
    expect(await client.event('stopped', 'nats-2')).toMatchObject({ request_id: 'halt' })
    client.send({ type: 'version', request_id: 'v' })
    expect(await client.next((msg) => msg.request_id === 'v')).toMatchObject({ event: 'version', data: '2.1.330 (Claude Code)' })
  })

  it('nats - an answer larger than the bus allows arrives cut, marked truncated, and the turn completes', async () => {
    client ??= await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', session_id: 'nats-big', prompt: 'big: 3000000', request_id: 'big' })
    const completed = await client.next((msg) => msg.request_id === 'big' && (msg.event === 'completed' || msg.event === 'error'))
    expect(completed.event).toBe('completed')
    const answer = client.eventsOf('nats-big').find((msg) => msg.event === 'answer')!
    expect(answer.truncated).toBe(true)
    expect((answer.data as string).length).toBeLessThan(1_048_576)
    expect((answer.data as string).startsWith('xxxx')).toBe(true)
  })

  it('nats - with the runner gone, commands fail fast with RUNNER_UNAVAILABLE', async () => {
    client ??= await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent')
    expect(await runner.stop('SIGTERM')).toBe(0)
    client.send({ type: 'execute', session_id: 'nats-3', prompt: 'hi', request_id: 'gone' })
    expect(await client.next((msg) => msg.request_id === 'gone', 5_000)).toMatchObject({ event: 'error', error: { code: 'RUNNER_UNAVAILABLE' } })
  })
})
