import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isLiveOnly, type ServiceEvent } from '../../../contract/mod.ts'
import { acceptsEventStream } from '../../../gateway/native/agent-chat-route.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { SseClient } from '../../fixtures/sse-client.ts'

describe('chat route - Accept negotiation', () => {
  it.each([
    { accept: 'text/event-stream', expected: true },
    { accept: 'application/json, text/event-stream;q=0.9', expected: true },
    { accept: 'TEXT/EVENT-STREAM', expected: true },
    { accept: 'application/json', expected: false },
    { accept: '*/*', expected: false },
    { accept: undefined, expected: false },
    { accept: 'text/event-streamx', expected: false },
  ])('$accept → $expected', ({ accept, expected }) => {
    expect(acceptsEventStream(accept)).toBe(expected)
  })
})

describe('chat route - POST /v1/agent/chat', () => {
  let stack: Stack
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${stack.url}/v1/agent/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }

  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack.close()
  })

  it('json - runs one turn and answers the text, session_id and stats; the session keeps its context', async () => {
    const first = await post({ session_id: 'chat-1', message: 'hello chat' })
    expect(first).toEqual({
      status: 200,
      body: {
        session_id: 'chat-1',
        turn_id: expect.stringMatching(/^turn_/),
        status: 'completed',
        answer: 'Echo: hello chat',
        stats: expect.objectContaining({ turns: 1, input_tokens: 12, output_tokens: 42, model: 'claude-fake-1' }),
        session_stats: expect.objectContaining({ turns: 1 }),
      },
    })
    const second = await post({ session_id: 'chat-1', message: 'recall' })
    expect(second.body).toMatchObject({ answer: 'Earlier prompts: hello chat', stats: { turns: 1 }, session_stats: { turns: 2 } })
  })

  it('json - without session_id the turn gets a session of its own', async () => {
    const { status, body } = await post({ message: 'no id' })
    expect(status).toBe(200)
    expect(body.session_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(body.answer).toBe('Echo: no id')
  })

  it('json - a failed turn answers its code and status in the service error shape', async () => {
    const { status, body } = await post({ session_id: 'chat-fail', message: 'fail' })
    expect(status).toBe(500)
    expect(body).toMatchObject({
      error: { code: 'ENGINE_ERROR', message: expect.stringContaining('500') },
      session_id: 'chat-fail',
      turn_id: expect.stringMatching(/^turn_/),
    })
  })

  it('400 - a missing message or broken JSON, as {error: {code, message}}', async () => {
    const missing = await post({ session_id: 'x' })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ error: { code: 'BAD_REQUEST', message: 'field "message" is required' } })
    const broken = await post('{"message":')
    expect(broken.status).toBe(400)
    expect(broken.body.error.code).toBe('BAD_JSON')
  })

  it('event-stream - streams the native events of the turn and ends with it', async () => {
    const stream = await SseClient.post(`${stack.url}/v1/agent/chat`, { session_id: 'chat-sse', message: 'tool: echo streamed' })
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    await stream.untilEnd()
    // The token deltas come too, live only (no seq); the stored events are the turn's.
    const stored = stream.data.filter((event) => !isLiveOnly(event as ServiceEvent))
    expect(stored.map((event) => event.event)).toEqual(['thinking', 'answer', 'tool_use', 'tool_result', 'answer', 'session_stats', 'completed'])
    expect(stream.data.map((event) => event.event)).toContain('answer_delta')
    expect(stored.every((event) => event.session_id === 'chat-sse' && typeof event.seq === 'number')).toBe(true)
    expect(stream.data.at(-1)).toMatchObject({ event: 'completed', stats: { turns: 1, tool_calls: 1 } })
  })

  it('event-stream - a turn that cannot start ends the stream with a native error event', async () => {
    const stream = await SseClient.post(`${stack.url}/v1/agent/chat`, { session_id: 'chat-bad-dir', message: 'x', work_dir: '../outside' })
    await stream.untilEnd()
    expect(stream.data).toEqual([
      { event: 'error', session_id: 'chat-bad-dir', data: expect.any(String), error: { code: 'WORK_DIR_REJECTED', message: expect.any(String) } },
    ])
  })

  it('a chat turn on a REST session shows in its messages and on the event stream', async () => {
    await fetch(`${stack.url}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 'chat-rest' }) })
    await post({ session_id: 'chat-rest', message: 'via chat' })
    const messages = (await (await fetch(`${stack.url}/session/chat-rest/message`)).json()) as any[]
    expect(messages.map((m) => m.info.role)).toEqual(['user', 'assistant'])
    expect(messages[0].parts[0].text).toBe('via chat')
    expect(messages[1].parts.some((p: any) => p.type === 'text' && p.text === 'Echo: via chat')).toBe(true)
  })
})
