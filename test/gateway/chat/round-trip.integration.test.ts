import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import { resolveConfig } from '../../../service/config/mod.ts'
import { CALLBACK_PATH, registerChat, type ChatSettings } from '../../../gateway/chat/mod.ts'
import { RunnerClient } from '../../../gateway/runner-client.ts'
import { SessionHub } from '../../../gateway/session-hub.ts'
import { captureLog, manualClock, manualEvery, signedQuery, textCallback, until } from '../../fixtures/chat.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { startFakeChatApi, type FakeChatApi } from '../../fakes/chat-api.ts'
import { MemoryRegistry } from '../../../state/mod.ts'

/**
 * The whole adapter in the real service: callback → gateway → bus → runner →
 * fake Claude CLI → answer → robot API (the fake chat platform).
 */
const TOKEN = 'round-trip-callback-token'

let api: FakeChatApi
let stack: Stack

beforeAll(async () => {
  api = await startFakeChatApi()
  stack = await startStack({
    chat: {
      enabled: true,
      api_url: api.url,
      app_key: api.appKey,
      app_token: api.appSecret,
      bot_token: TOKEN,
      system_prompt: 'Answer like a pirate.',
      retry_delay: '1ms',
    },
  })
})
afterAll(async () => {
  await stack?.close()
  await api?.stop()
})

function callback(body: unknown, query = signedQuery(TOKEN, Date.now())): Promise<Response> {
  return fetch(`${stack.url}${CALLBACK_PATH}?${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

function contents(from: number): string[] {
  return api.sent.slice(from).map((m) => m.body.text.content)
}

describe('chat round trip', () => {
  it('round trip - the platform verifies the callback URL', async () => {
    const query = signedQuery(TOKEN, Date.now())
    const ok = await fetch(`${stack.url}${CALLBACK_PATH}?${query}`)
    expect(ok.status).toBe(200)
    expect(await ok.text()).toBe(new URLSearchParams(query).get('timestamp'))
    const bad = await fetch(`${stack.url}${CALLBACK_PATH}?${signedQuery('wrong', Date.now())}`)
    expect(bad.status).toBe(401)
    expect(await bad.text()).toBe('Unauthorized')
  })

  it('round trip - a text message is acknowledged at once and answered through the robot API', async () => {
    const before = api.sent.length
    const release = api.holdSends()
    const res = await callback(textCallback('hello', { senderId: 'alice', conversationId: 'conv-1', robotCode: 'robot-7' }))
    // Acknowledged while no reply can have been delivered yet: the work runs after the response.
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, processed: true })
    expect(api.sent.length).toBe(before)
    release()
    const sent = await api.waitForSent(before + 1)
    expect(sent[before]).toEqual({
      robotCode: 'robot-7',
      token: 'fake-token-1',
      body: { msgtype: 'text', text: { content: 'Echo: hello' }, userIds: ['alice'] },
    })
  })

  it('round trip - later messages of the same sender continue the conversation; another sender has their own', async () => {
    const before = api.sent.length
    await callback(textCallback('recall', { senderId: 'alice', conversationId: 'conv-1' }))
    await api.waitForSent(before + 1)
    await callback(textCallback('recall', { senderId: 'bob', conversationId: 'conv-1' }))
    await api.waitForSent(before + 2)
    expect(contents(before)).toEqual(['Earlier prompts: hello', 'Earlier prompts: (none)'])
  })

  it('round trip - the configured system prompt reaches the agent', async () => {
    const before = api.sent.length
    await callback(textCallback('system?', { senderId: 'carol' }))
    await api.waitForSent(before + 1)
    expect(contents(before)).toEqual(['System: Answer like a pirate.'])
  })

  it('round trip - a 12,000-character answer arrives as three numbered parts, in order', async () => {
    const before = api.sent.length
    await callback(textCallback('big: 12000', { senderId: 'dave' }))
    await api.waitForSent(before + 3)
    const parts = contents(before)
    expect(parts.map((p) => p.slice(0, 6))).toEqual(['[1/3] ', '[2/3] ', '[3/3] '])
    expect(parts.map((p) => [...p].length)).toEqual([5000, 5000, 6 + 12_000 - 2 * 4994])
    expect(parts.map((p) => p.slice(6)).join('')).toBe('x'.repeat(12_000))
  })

  it('round trip - a revoked token is refreshed once and the reply still arrives', async () => {
    const before = api.sent.length
    const tokens = api.tokenCalls.length
    api.expireTokens()
    await callback(textCallback('after expiry', { senderId: 'erin' }))
    await api.waitForSent(before + 1)
    expect(contents(before)).toEqual(['Echo: after expiry'])
    expect(api.tokenCalls.length).toBe(tokens + 1)
  })

  it('round trip - a rate-limited send is retried', async () => {
    const before = api.sent.length
    api.failSends(429, 2)
    await callback(textCallback('busy platform', { senderId: 'frank' }))
    await api.waitForSent(before + 1)
    expect(contents(before)).toEqual(['Echo: busy platform'])
  })

  it('round trip - unsigned and stale callbacks start nothing', async () => {
    const unsigned = await fetch(`${stack.url}${CALLBACK_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(textCallback('x')),
    })
    expect(unsigned.status).toBe(401)
    const stale = await callback(textCallback('x'), signedQuery(TOKEN, Date.now() - 10 * 60_000))
    expect(stale.status).toBe(401)
  })
})

describe('chat sweep with a real runner', () => {
  it('round trip - an idle session is swept and its agent process freed; the next message starts afresh', async () => {
    const clock = manualClock(Date.now())
    const timers = manualEvery()
    const { log, lines } = captureLog('info')
    const config = resolveConfig({ chat: { enabled: true, api_url: api.url, app_key: api.appKey, app_secret: api.appSecret, callback_token: TOKEN } }, {})
    const runners = new RunnerClient(stack.service.bus, stack.config.nats.prefix, 5000, new MemoryRegistry())
    // Unique per run: the fake CLI keeps transcripts under $HOME across runs.
    const run = randomUUID()
    const ids = [`chat-sweep-1-${run}`, `chat-sweep-2-${run}`]
    const first = ids[0]!
    const app = Fastify()
    await app.register(registerChat, {
      settings: config.chat as ChatSettings,
      runners,
      hub: new SessionHub(stack.service.bus, stack.config.nats.prefix, log),
      log,
      now: clock.now,
      every: timers.every,
      newSessionId: () => ids.shift()!,
    })
    try {
      const post = (content: string) =>
        app.inject({ method: 'POST', url: `${CALLBACK_PATH}?${signedQuery(TOKEN, clock.now())}`, payload: textCallback(content, { senderId: 'sweepy' }) })
      const before = api.sent.length
      expect((await post('first')).statusCode).toBe(200)
      await api.waitForSent(before + 1)
      // LastActive is set when the work ends, just after the reply went out.
      await until('the reply to be done', () => lines.some((l) => l.msg === 'chat reply sent'))
      // The runner holds the session (and its CLI process).
      expect(await runners.send({ type: 'stats', session_id: first })).toMatchObject({ busy: false })

      expect(timers.tasks.map((t) => t.ms)).toEqual([5 * 60_000])
      clock.advance(29 * 60_000)
      await timers.run()
      expect(await runners.send({ type: 'stats', session_id: first })).toMatchObject({ busy: false })

      clock.advance(60_000 + 1)
      await timers.run()
      const gone = await runners.send({ type: 'stats', session_id: first }).catch((err: unknown) => err)
      expect(gone).toBeInstanceOf(ServiceError)
      expect((gone as ServiceError).code).toBe('SESSION_NOT_FOUND')

      // Same sender again: a new session, a new conversation.
      expect((await post('recall')).statusCode).toBe(200)
      await api.waitForSent(before + 2)
      expect(api.sent[before + 1]!.body.text.content).toBe('Earlier prompts: (none)')
    } finally {
      await app.close()
    }
    expect(timers.tasks[0]!.stopped).toBe(true)
  })
})
