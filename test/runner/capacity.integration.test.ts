import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

describe('runner capacity', () => {
  let stack: Stack
  let client: WsClient
  beforeAll(async () => {
    stack = await startStack({ engine: { idle_timeout: '300ms' }, runner: { max_sessions: 1 } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client.close()
    await stack.close()
  })

  it('capacity - a stopped session (its CLI gone) is handed back when idle, so its place is free again', async () => {
    client.send({ type: 'execute', session_id: 'cap-1', prompt: 'sleep: 30' })
    await client.event('tool_use', 'cap-1')
    client.send({ type: 'stop', session_id: 'cap-1', request_id: 'halt' })
    await client.event('stopped', 'cap-1')
    await vi.waitFor(async () => expect((await stack.service.state!.registry.get('cap-1'))!.value.owner).toBeUndefined(), { timeout: 5_000 })
    client.send({ type: 'execute', session_id: 'cap-2', prompt: 'room again?', request_id: 'next' })
    expect(await client.next((msg) => msg.request_id === 'next' && (msg.event === 'completed' || msg.event === 'error'))).toMatchObject({ event: 'completed' })
  })

  it('capacity - execute and stop sent together for a new session: no internal error, and its events keep their sequence', async () => {
    await vi.waitFor(async () => expect((await stack.service.state!.registry.get('cap-2'))!.value.owner).toBeUndefined(), { timeout: 5_000 })
    client.send({ type: 'execute', session_id: 'cap-3', prompt: 'first', request_id: 'x1' })
    client.send({ type: 'stop', session_id: 'cap-3', request_id: 'x2' })
    await client.next((msg) => msg.request_id === 'x2' && msg.event === 'stopped')
    expect(client.messages.filter((msg) => msg.event === 'error' && msg.session_id === 'cap-3')).toEqual([])
    client.send({ type: 'execute', session_id: 'cap-3', prompt: 'second', request_id: 'x3' })
    expect(await client.next((msg) => msg.request_id === 'x3' && msg.event === 'completed')).toMatchObject({ data: 'Echo: second' })
    const seqs = client.eventsOf('cap-3').map((msg) => msg.seq as number)
    expect(new Set(seqs).size).toBe(seqs.length)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
  })
})
