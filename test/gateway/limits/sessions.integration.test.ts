import { describe, expect, it } from 'vitest'
import { stackPerTest } from '../../fixtures/stack.ts'

describe('limits - concurrent sessions (limits.max_active_sessions)', () => {
  const stacks = stackPerTest()

  it('sessions - one session too many is OVERLOADED (WebSocket error event, HTTP 503 + Retry-After); the active one may still queue', async () => {
    const { stack, client } = await stacks.open({ limits: { max_active_sessions: 1, retry_after: '3s' } })
    client.send({ type: 'execute', session_id: 'busy', prompt: 'sleep: 30', request_id: 1 })
    await client.event('tool_use', 'busy')

    client.send({ type: 'execute', session_id: 'other', prompt: 'hi', request_id: 2 })
    expect(await client.next((msg) => msg.request_id === 2)).toMatchObject({ event: 'error', session_id: 'other', error: { code: 'OVERLOADED' } })

    const response = await fetch(`${stack.url}/v1/agent/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'third', message: 'hi' }),
    })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('3')
    expect(await response.json()).toMatchObject({ error: { code: 'OVERLOADED' } })

    // The active session may queue another turn.
    client.send({ type: 'execute', session_id: 'busy', prompt: 'queued', request_id: 3 })
    client.send({ type: 'stop', session_id: 'busy', request_id: 4 })
    await client.next((msg) => msg.request_id === 4 && msg.event === 'stopped')

    // Its turns ended: the other session gets in.
    client.send({ type: 'execute', session_id: 'other', prompt: 'now', request_id: 5 })
    expect(await client.next((msg) => msg.request_id === 5 && msg.event === 'completed')).toMatchObject({ data: 'Echo: now' })
  })
})

describe('keepalive - task_boundary pulses on the WebSocket', () => {
  const stacks = stackPerTest()

  it('pulses - a long tool gets task_boundary pulses between its tool_use and tool_result, outside the sequence', async () => {
    const { client } = await stacks.open({ server: { task_pulse: '150ms' } })
    client.send({ type: 'execute', session_id: 'p1', prompt: 'sleep: 1', request_id: 'r' })
    await client.event('completed', 'p1')
    const events = client.eventsOf('p1')
    const use = events.findIndex((event) => event.event === 'tool_use')
    const result = events.findIndex((event) => event.event === 'tool_result')
    const pulses = events.filter((event) => event.event === 'task_boundary')
    expect(pulses.length).toBeGreaterThanOrEqual(2)
    const tool = events[use]!.tool as { id: string; name: string }
    for (const pulse of pulses) {
      const at = events.indexOf(pulse)
      expect(at).toBeGreaterThan(use)
      expect(at).toBeLessThan(result)
      expect(pulse).toMatchObject({
        session_id: 'p1',
        turn_id: events[use]!.turn_id,
        data: 'tool running',
        tool: { id: tool.id, name: tool.name },
        elapsed_ms: expect.any(Number),
      })
      expect(pulse.seq).toBeUndefined()
    }
    // Elapsed time grows pulse by pulse.
    const elapsed = pulses.map((pulse) => pulse.elapsed_ms as number)
    expect([...elapsed].sort((a, b) => a - b)).toEqual(elapsed)
    // The session's own sequence has no gap.
    const seqs = events.filter((event) => event.seq !== undefined).map((event) => event.seq as number)
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i))
  })
})
