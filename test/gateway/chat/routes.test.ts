import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CALLBACK_PATH, registerCallbackRoutes } from '../../../gateway/chat/routes.ts'
import type { ChatSession } from '../../../gateway/chat/sessions.ts'
import { sign } from '../../../gateway/chat/signature.ts'
import type { ChatMessage } from '../../../gateway/chat/wire.ts'
import { captureLog, manualClock, signedQuery, textCallback } from '../../fixtures/chat.ts'

const TOKEN = 'callback-token'
const WINDOW = 5 * 60_000

let app: FastifyInstance
let clock: ReturnType<typeof manualClock>
let received: ChatMessage[]
let ignored: number
let lines: Record<string, any>[]

beforeEach(async () => {
  clock = manualClock()
  received = []
  ignored = 0
  const captured = captureLog()
  lines = captured.lines
  app = Fastify()
  registerCallbackRoutes(app, {
    settings: { callback_token: TOKEN, timestamp_window: WINDOW },
    adapter: {
      receive: (message) => {
        received.push(message)
        return { session_id: 's1', key: 'k' } as ChatSession
      },
      ignore: () => void ignored++,
    },
    log: captured.log,
    now: clock.now,
  })
  await app.ready()
})
afterEach(async () => {
  await app.close()
})

function post(query: string, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: `${CALLBACK_PATH}?${query}`,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  })
}

describe('chat callback routes', () => {
  it('routes - verification with a valid signature answers 200 with the timestamp', async () => {
    const query = signedQuery(TOKEN, clock.now())
    const res = await app.inject({ method: 'GET', url: `${CALLBACK_PATH}?${query}` })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe(String(clock.now()))
    expect(res.headers['content-type']).toMatch(/^text\/plain/)
  })

  it.each([
    ['a wrong signature', () => signedQuery('other-token', clock.now())],
    ['no parameters', () => ''],
    ['no nonce', () => new URLSearchParams({ signature: sign(TOKEN, String(clock.now()), ''), timestamp: String(clock.now()) }).toString()],
    ['a stale timestamp', () => signedQuery(TOKEN, clock.now() - WINDOW - 1)],
    ['a timestamp from the future', () => signedQuery(TOKEN, clock.now() + WINDOW + 1)],
  ])('routes - verification with %s answers 401 Unauthorized', async (_name, query) => {
    const res = await app.inject({ method: 'GET', url: `${CALLBACK_PATH}?${query()}` })
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe('Unauthorized')
  })

  it('routes - a signed text message is acknowledged and queued, stored as §2.9 says', async () => {
    const res = await post(signedQuery(TOKEN, clock.now()), textCallback('hello agent'))
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ ok: true, processed: true })
    expect(received).toEqual([{ user_id: 'user-1', content: 'hello agent', metadata: { conversation_id: 'cid-1', robot_code: 'robot-1' }, sender_nick: 'Ada' }])
  })

  it('routes - the signature may come in headers instead of the query', async () => {
    const params = Object.fromEntries(new URLSearchParams(signedQuery(TOKEN, clock.now())))
    const res = await app.inject({ method: 'POST', url: CALLBACK_PATH, payload: textCallback('via headers'), headers: params })
    expect(res.statusCode).toBe(200)
    expect(received.map((m) => m.content)).toEqual(['via headers'])
  })

  it('routes - an unsigned message is refused before its body is read', async () => {
    const res = await post('', '{ not json')
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe('Unauthorized')
    expect(received).toEqual([])
    expect(lines.find((l) => l.msg === 'chat callback rejected')).toMatchObject({ reason: 'missing' })
  })

  it('routes - a message signed with another token is refused', async () => {
    const res = await post(signedQuery('not-the-token', clock.now()), textCallback('x'))
    expect(res.statusCode).toBe(401)
    expect(received).toEqual([])
  })

  it('routes - a captured message replayed after the window is refused', async () => {
    const query = signedQuery(TOKEN, clock.now())
    expect((await post(query, textCallback('once'))).statusCode).toBe(200)
    clock.advance(WINDOW + 1)
    const res = await post(query, textCallback('once'))
    expect(res.statusCode).toBe(401)
    expect(received).toHaveLength(1)
  })

  it('routes - a message replayed inside the window is acknowledged but not processed again', async () => {
    const query = signedQuery(TOKEN, clock.now())
    await post(query, textCallback('once'))
    clock.advance(1000)
    const res = await post(query, textCallback('once'))
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ ok: true, processed: false, reason: 'duplicate' })
    expect(received).toHaveLength(1)
  })

  it.each(['picture', 'file', 'audio', 'richText'])('routes - msgtype %s is acknowledged, logged and not processed', async (msgtype) => {
    const res = await post(signedQuery(TOKEN, clock.now()), { msgtype, conversationId: 'c', senderId: 'u', content: { downloadCode: 'x' } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ ok: true, processed: false })
    expect(received).toEqual([])
    expect(ignored).toBe(1)
    expect(lines.find((l) => l.msgtype === msgtype)?.msg).toMatch(/not a text message/)
  })

  it('routes - a signed text message without senderId is a 400 naming the field', async () => {
    const res = await post(signedQuery(TOKEN, clock.now()), textCallback('x', { senderId: undefined }))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST' })
    expect(res.json().message).toContain('senderId')
    expect(received).toEqual([])
  })

  it('routes - a signed body without msgtype is a 400', async () => {
    const res = await post(signedQuery(TOKEN, clock.now()), { hello: 1 })
    expect(res.statusCode).toBe(400)
    expect(res.json().message).toContain('msgtype')
  })

  it('routes - a signed body that is not JSON is a 400 BAD_JSON', async () => {
    const res = await post(signedQuery(TOKEN, clock.now()), '{ not json')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'BAD_JSON' })
  })

  it('routes - a signed message without robotCode is still accepted (the reply side reports it)', async () => {
    const res = await post(signedQuery(TOKEN, clock.now()), textCallback('x', { robotCode: undefined }))
    expect(res.statusCode).toBe(200)
    expect(received[0]!.metadata).toEqual({ conversation_id: 'cid-1' })
  })
})
