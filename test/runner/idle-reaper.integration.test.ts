import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

/** Every turn ends in exactly one end event, however short the idle timeout (issue 16, finding 2). */
describe('idle reaper and new sessions', () => {
  let stack: Stack
  let client: WsClient
  beforeAll(async () => {
    stack = await startStack({ engine: { idle_timeout: '1ms' } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client.close()
    await stack.close()
  })

  it('a reaper due while a new session is claimed and its prompt admitted leaves the turn alone', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `reap-${i}`)
    for (const id of ids) client.send({ type: 'execute', session_id: id, prompt: `hello ${id}`, request_id: id })
    for (const id of ids) {
      const end = await client.next((msg) => msg.request_id === id && (msg.event === 'completed' || msg.event === 'error'))
      expect(end).toMatchObject({ event: 'completed', data: `Echo: hello ${id}` })
    }
    for (const id of ids) {
      const ends = client.eventsOf(id).filter((msg) => msg.event === 'completed' || msg.event === 'error')
      expect(ends).toHaveLength(1)
      // The log has what was delivered (turn_started is internal: not sent over the WebSocket).
      const replay = (await stack.service.state!.events.read(id, 0)).filter((event) => event.event !== 'turn_started')
      expect(replay.map((event) => event.seq)).toEqual(client.eventsOf(id).map((msg) => msg.seq))
    }
  })

  it('a second turn after the CLI was reaped resumes the conversation and ends once', async () => {
    client.send({ type: 'execute', session_id: 'reap-0', prompt: 'again', request_id: 'again' })
    const end = await client.next((msg) => msg.request_id === 'again' && (msg.event === 'completed' || msg.event === 'error'))
    expect(end).toMatchObject({ event: 'completed', data: 'Echo: again' })
  })
})
