import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import pino from 'pino'
import { MemoryBus } from '../../../../bus/mod.ts'
import { buildGateway } from '../../../../gateway/server.ts'
import { processesUnder } from '../../../fixtures/processes.ts'
import { stackPerTest } from '../../../fixtures/stack.ts'
import { WsClient } from '../../../fixtures/ws-client.ts'

describe('native websocket - time limits and failures', () => {
  const stacks = stackPerTest()

  it('timeout - a turn longer than engine.timeout is interrupted and ends in TURN_TIMEOUT', async () => {
    const { stack, client } = await stacks.open({ engine: { timeout: '700ms' } })
    client.send({ type: 'execute', session_id: 't-1', prompt: 'sleep: 30', request_id: 1 })
    const error = await client.event('error', 't-1')
    expect(error).toMatchObject({ request_id: 1, error: { code: 'TURN_TIMEOUT' } })
    // The interrupt ended the tool; the CLI itself stays for the next turn.
    const sandbox = await realpath(path.join(stack.config.session.work_dir, 't-1'))
    await vi.waitFor(async () => expect(await processesUnder(sandbox)).toHaveLength(1), { timeout: 5_000 })
    // The session is still usable.
    client.send({ type: 'execute', session_id: 't-1', prompt: 'after the timeout', request_id: 2 })
    expect(await client.next((msg) => msg.request_id === 2 && msg.event === 'completed')).toMatchObject({ data: 'Echo: after the timeout' })
  })

  it('idle - an idle CLI is reaped, and the next execute resumes its conversation', async () => {
    const { stack, client } = await stacks.open({ engine: { idle_timeout: '300ms' } })
    client.send({ type: 'execute', session_id: 'idle-1', prompt: 'remember ALPHA' })
    await client.event('completed', 'idle-1')
    const sandbox = await realpath(path.join(stack.config.session.work_dir, 'idle-1'))
    expect((await processesUnder(sandbox)).length).toBe(1)
    await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 5_000 })
    client.send({ type: 'execute', session_id: 'idle-1', prompt: 'recall', request_id: 'r' })
    expect(await client.next((msg) => msg.request_id === 'r' && msg.event === 'completed')).toMatchObject({
      data: expect.stringContaining('remember ALPHA'),
    })
  })

  it('engine - a CLI that cannot start is an ENGINE_START_FAILED error event', async () => {
    const { client } = await stacks.open({ engine: { command: '/nonexistent/claude', args: [] } })
    client.send({ type: 'execute', session_id: 'nostart', prompt: 'hi', request_id: 1 })
    expect(await client.event('error', 'nostart')).toMatchObject({ request_id: 1, error: { code: 'ENGINE_START_FAILED' } })
    client.send({ type: 'version', request_id: 2 })
    expect(await client.next((msg) => msg.request_id === 2)).toMatchObject({ event: 'error', error: { code: 'ENGINE_START_FAILED' } })
  })

  it('runner gone - a gateway with no runner answers RUNNER_UNAVAILABLE at once', async () => {
    const app = await buildGateway({ bus: new MemoryBus(), subjectPrefix: 'agent-runtime', requestTimeoutMs: 10_000, log: pino({ level: 'silent' }) })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await WsClient.connect(address.replace('http', 'ws') + '/ws/v1/agent')
    try {
      const sent = Date.now()
      client.send({ type: 'execute', session_id: 'orphan', prompt: 'hi', request_id: 1 })
      // Well before the 10 s request timeout: nobody listening is known at once.
      expect(await client.next((msg) => msg.request_id === 1, 5_000)).toMatchObject({ event: 'error', error: { code: 'RUNNER_UNAVAILABLE' } })
      expect(Date.now() - sent).toBeLessThan(5_000)
    } finally {
      await client.close()
      await app.close()
    }
  })
})
