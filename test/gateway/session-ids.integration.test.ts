/**
 * Session ids on every surface (WebSocket frames, REST bodies and paths, the
 * chat route, SSE paths): ids that are not well-formed UTF-16 are refused
 * with BAD_REQUEST, and every id the README allows (up to 256 characters of
 * any text) runs turns, resumed across a CLI restart.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sessionPathName } from '../../runner/sandbox.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const LONE = 'x\ud800'
const REPLACED = 'x\ufffd'

describe('session ids - every surface', () => {
  let stack: Stack
  let client: WsClient
  const call = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(stack.url + url, {
      method,
      ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }
  }

  beforeAll(async () => {
    // A short idle timeout ends a session's CLI between turns: the next turn starts it again with --resume.
    stack = await startStack({ engine: { idle_timeout: '1s' } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client.close()
    await stack.close()
  })

  it.each([
    ['execute', { type: 'execute', session_id: LONE, prompt: 'hi' }],
    ['session_start', { type: 'session_start', session_id: LONE }],
    ['attach', { type: 'attach', session_id: LONE }],
    ['stop', { type: 'stop', session_id: LONE }],
    ['stats', { type: 'stats', session_id: LONE }],
  ])('session ids - a %s frame with a lone surrogate is refused with BAD_REQUEST', async (type, frame) => {
    const requestId = `lone-${type}`
    client.send({ ...frame, request_id: requestId })
    const error = await client.next((msg) => msg.event === 'error' && msg.request_id === requestId, 5_000)
    expect((error.error as { code: string }).code).toBe('BAD_REQUEST')
    expect(JSON.stringify(error)).toMatch(/well-formed/)
  })

  it('session ids - REST and the chat route refuse a lone surrogate with 400 BAD_REQUEST', async () => {
    const created = await call('POST', '/session', { session_id: LONE })
    expect(created.status).toBe(400)
    expect(JSON.stringify(created.body)).toContain('BAD_REQUEST')
    const chat = await call('POST', '/v1/agent/chat', { session_id: LONE, message: 'hi' })
    expect(chat.status).toBe(400)
    expect(chat.body).toMatchObject({ error: { code: 'BAD_REQUEST' } })
    // Paths cannot carry one: its UTF-8 is not valid, and the URL is refused.
    expect((await call('GET', '/v1/sessions/x%ED%A0%80/events')).status).toBe(400)
    expect((await call('GET', '/session/x%ED%A0%80')).status).toBe(400)
  })

  it('session ids - an id with U+FFFD is its own session, and no sandbox is made for the lone-surrogate one', async () => {
    client.send({ type: 'execute', session_id: REPLACED, prompt: 'hello' })
    await client.event('completed', REPLACED)
    const sandboxes = await readdir(path.join(stack.dir, 'sessions'))
    expect(sandboxes).toContain('~' + Buffer.from(REPLACED).toString('base64url'))
    expect(client.eventsOf(LONE).filter((msg) => msg.event !== 'error')).toEqual([])
  })

  it.each([
    ['201 safe characters', 'a'.repeat(201)],
    ['256 characters with spaces', 'long id '.repeat(32)],
    ['256 three-byte characters', '€'.repeat(256)],
    ['128 emoji', '\u{1F600}'.repeat(128)],
  ])('session ids - an id of %s runs turns and resumes its conversation after the CLI is closed', async (_, id) => {
    client.send({ type: 'execute', session_id: id, prompt: 'one' })
    const first = await client.event('completed', id)
    expect(first.session_id).toBe(id)
    // The marker says there is a conversation; the idle reap ends the CLI, the next turn resumes it.
    await expect.poll(() => readdir(path.join(stack.dir, 'markers')), { timeout: 5_000 }).toContain(`${sessionPathName(id)}.json`)
    // The reap ends the CLI, then hands the session back: its record has no owner from then on.
    await vi.waitFor(
      async () => {
        const record = await stack.service.state!.registry.get(id)
        expect(record).toBeDefined()
        expect(record!.value.owner).toBeUndefined()
      },
      { timeout: 5_000 },
    )
    client.send({ type: 'execute', session_id: id, prompt: 'two' })
    const second = await client.next((msg) => msg.event === 'completed' && msg.session_id === id && msg !== first)
    expect(second).toMatchObject({ session_id: id })
    expect(client.eventsOf(id).filter((msg) => msg.event === 'error')).toEqual([])
  })
})
