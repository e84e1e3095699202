import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { SseClient } from '../../fixtures/sse-client.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

/**
 * Opens the session's event stream; resolves once the route follows the session: it writes its
 * first comment (`: session <id>`) in the same step as it attaches to the session's events.
 */
async function openSse(url: string, headers: Record<string, string>) {
  // fetch's own Accept: the route is not asked for an event stream by name.
  const stream = await SseClient.open(url, { accept: '*/*', ...headers })
  expect(stream.response.status).toBe(200)
  expect(stream.response.headers.get('content-type')).toContain('text/event-stream')
  await vi.waitFor(() => expect(stream.frames.some((frame) => frame.raw.startsWith(': session '))).toBe(true))
  return stream
}

/** Reads SSE frames until `until` matches one; returns the frames as {id, data}. */
async function readSse(stream: SseClient, until: (data: Record<string, unknown>) => boolean) {
  const last = await stream.next(until)
  stream.close()
  const frames = stream.frames.filter((frame) => frame.data !== undefined)
  return frames
    .slice(0, frames.findIndex((frame) => frame.data === last) + 1)
    .map(({ id, data }) => ({ ...(id !== undefined && { id }), data: data as Record<string, unknown> }))
}

describe('session event stream', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack.close()
  })

  it("sse - streams a session's native events with their sequence as id; Last-Event-ID resumes after it", async () => {
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'sse-1', prompt: 'tool: echo streamed' })
    await client.event('completed', 'sse-1')
    await client.close()
    const all = client.eventsOf('sse-1')
    const resumeAfter = all[1]!.seq as number

    // A resume replays stored events only: the token deltas were live only.
    const frames = await readSse(
      await openSse(`${stack.url}/v1/sessions/sse-1/events`, { 'last-event-id': String(resumeAfter) }),
      (data) => data.event === 'completed',
    )
    expect(frames.map((frame) => Number(frame.id))).toEqual(all.slice(2).map((event) => event.seq))
    expect(frames.map((frame) => frame.data.event)).toEqual(all.slice(2).map((event) => event.event))
  })

  it('sse - without Last-Event-ID, live events only; a bad one is a 400', async () => {
    const live = readSse(await openSse(`${stack.url}/v1/sessions/sse-2/events`, {}), (data) => data.event === 'completed')
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'sse-2', prompt: 'hello' })
    const frames = await live
    // Live: the answer's deltas (no id: not stored) come before it.
    expect(frames.map((frame) => frame.data.event)).toEqual(['answer_delta', 'answer', 'session_stats', 'completed'])
    expect(frames[0]!.id).toBeUndefined()
    expect(frames[0]!.data.data).toBe(frames[1]!.data.data)
    await client.close()
    const bad = await fetch(`${stack.url}/v1/sessions/sse-2/events`, { headers: { 'last-event-id': 'yesterday' } })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ code: 'BAD_REQUEST' })
  })
})
