import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

/** Reads SSE frames until `until` matches one; returns the frames as {id, data}. */
async function readSse(url: string, headers: Record<string, string>, until: (data: Record<string, unknown>) => boolean) {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toContain('text/event-stream')
  const frames: { id?: string; data: Record<string, unknown> }[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true })
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const id = /^id: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (data === undefined) continue
      const frame = { ...(id !== undefined && { id }), data: JSON.parse(data) as Record<string, unknown> }
      frames.push(frame)
      if (until(frame.data)) {
        // Stop reading first: aborting under a running iteration makes it throw.
        setImmediate(() => controller.abort())
        return frames
      }
    }
  }
  return frames
}

describe('session event stream', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack.close()
  })

  it('sse - streams a session\'s native events with their sequence as id; Last-Event-ID resumes after it', async () => {
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'sse-1', prompt: 'tool: echo streamed' })
    await client.event('completed', 'sse-1')
    await client.close()
    const all = client.eventsOf('sse-1')
    const resumeAfter = all[1]!.seq as number

    const frames = await readSse(`${stack.url}/v1/sessions/sse-1/events`, { 'last-event-id': String(resumeAfter) }, (data) => data.event === 'completed')
    expect(frames.map((frame) => Number(frame.id))).toEqual(all.slice(2).map((event) => event.seq))
    expect(frames.map((frame) => frame.data.event)).toEqual(all.slice(2).map((event) => event.event))
  })

  it('sse - without Last-Event-ID, live events only; a bad one is a 400', async () => {
    const live = readSse(`${stack.url}/v1/sessions/sse-2/events`, {}, (data) => data.event === 'completed')
    await new Promise((resolve) => setTimeout(resolve, 200))
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'sse-2', prompt: 'hello' })
    const frames = await live
    expect(frames.map((frame) => frame.data.event)).toEqual(['answer', 'completed'])
    await client.close()
    const bad = await fetch(`${stack.url}/v1/sessions/sse-2/events`, { headers: { 'last-event-id': 'yesterday' } })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ code: 'BAD_REQUEST' })
  })
})
