import { afterEach, describe, expect, it } from 'vitest'
import { ChatConfigSchema, type ChatConfig } from '../../gateway/chat/mod.ts'
import { captureLog, manualClock, signedQuery, textCallback } from '../fixtures/chat.ts'
import { gatewayUnderTest, type GatewayOverrides, type GatewayUnderTest } from '../fixtures/gateway.ts'
import { handshake } from '../fixtures/ws-handshake.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const KEY_OLD = 'old-key-7f3a9c'
const KEY_NEW = 'new-key-2b8e41'
const CALLBACK_TOKEN = 'callback-token-for-tests'

let gateway: GatewayUnderTest | undefined
let clients: WsClient[] = []
afterEach(async () => {
  for (const client of clients) await client.close()
  clients = []
  await gateway?.close()
  gateway = undefined
})

async function start(overrides: GatewayOverrides = {}, listen = false): Promise<GatewayUnderTest> {
  gateway = await gatewayUnderTest(overrides)
  // Stand-ins for the probes (observability/ registers the real ones).
  for (const path of ['/health', '/health/live', '/health/ready']) gateway.app.get(path, { config: { access: 'open' } }, async () => ({ status: 'healthy' }))
  if (listen) await gateway.listen()
  return gateway
}

const withKeys = { auth: { api_keys: [KEY_OLD, KEY_NEW] } }

describe('guard - API keys on REST and SSE routes', () => {
  it('auth - Authorization: Bearer and X-API-Key both work, with either key of a rotation', async () => {
    const { app } = await start(withKeys)
    for (const headers of [
      { authorization: `Bearer ${KEY_OLD}` },
      { authorization: `Bearer ${KEY_NEW}` },
      { 'x-api-key': KEY_OLD },
      { 'x-api-key': KEY_NEW },
      { authorization: `Bearer ${KEY_NEW}`, 'x-api-key': KEY_OLD },
    ]) {
      const response = await app.inject({ method: 'GET', url: '/session', headers })
      expect(response.statusCode, JSON.stringify(headers)).toBe(200)
    }
  })

  it('auth - missing or wrong key is 401 in OpenCode shape on OpenCode routes', async () => {
    const { app } = await start(withKeys)
    for (const headers of [
      {},
      { authorization: 'Bearer wrong' },
      { 'x-api-key': 'wrong' },
      { authorization: `Bearer ${KEY_OLD}`, 'x-api-key': 'wrong' },
      { authorization: `Basic ${Buffer.from(`u:${KEY_OLD}`).toString('base64')}` },
    ]) {
      const response = await app.inject({ method: 'GET', url: '/session', headers })
      expect(response.statusCode, JSON.stringify(headers)).toBe(401)
      expect(response.headers['content-type']).toMatch(/application\/json/)
      expect(response.json()).toEqual({ name: 'UnknownError', data: { message: expect.any(String), code: 'UNAUTHORIZED' } })
    }
  })

  it('auth - the quick-start chat route answers 401 in its own {error} shape', async () => {
    const { app } = await start(withKeys)
    const response = await app.inject({ method: 'POST', url: '/v1/agent/chat', payload: { message: 'hi' } })
    expect(response.statusCode).toBe(401)
    expect(response.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.stringContaining('Authorization: Bearer') } })
  })

  it('auth - unknown routes are guarded too: 401 without a key, 404 {code, message} with one', async () => {
    const { app } = await start(withKeys)
    const anonymous = await app.inject({ method: 'GET', url: '/no/such/route?x=1' })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json()).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String) })
    const known = await app.inject({ method: 'GET', url: '/no/such/route?x=1', headers: { 'x-api-key': KEY_OLD } })
    expect(known.statusCode).toBe(404)
    expect(known.json()).toEqual({ code: 'ROUTE_NOT_FOUND', message: 'no route GET /no/such/route' })
  })

  it('auth - the probes stay open; everything else needs the key', async () => {
    const { app } = await start(withKeys)
    for (const url of ['/health', '/health/live', '/health/ready']) expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(200)
    for (const url of ['/config', '/session', '/session/status', '/metrics']) expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(401)
  })

  it('auth - GET /config tells whether keys are enforced', async () => {
    const keyed = await start(withKeys)
    expect((await keyed.app.inject({ method: 'GET', url: '/config', headers: { 'x-api-key': KEY_NEW } })).json().auth.enabled).toBe(true)
    await keyed.close()
    const open = await start()
    expect((await open.app.inject({ method: 'GET', url: '/config' })).json().auth.enabled).toBe(false)
  })

  it('auth - no key is ever written to a log line or an error body', async () => {
    const { log, lines } = captureLog()
    const { app } = await start({ ...withKeys, log })
    const responses = [
      await app.inject({ method: 'GET', url: '/session', headers: { authorization: 'Bearer guessed-secret-123' } }),
      await app.inject({ method: 'GET', url: '/session', headers: { 'x-api-key': 'guessed-secret-123', authorization: `Bearer ${KEY_OLD}` } }),
    ]
    const everything = JSON.stringify(lines) + responses.map((response) => response.body).join('')
    expect(lines.some((line) => line.msg === 'request refused: API key missing or invalid')).toBe(true)
    expect(everything).not.toContain('guessed-secret-123')
    expect(everything).not.toContain(KEY_OLD)
  })

  it('auth - no key and a non-loopback bind address warns at start', async () => {
    const { log, lines } = captureLog()
    await start({ host: '0.0.0.0', log })
    expect(lines.filter((line) => line.level === 'warn' && /^SECURITY WARNING/.test(line.msg))).toHaveLength(1)
  })
})

describe('guard - the chat callback keeps its own signature check', () => {
  const chat = (): ChatConfig =>
    ChatConfigSchema.parse({ enabled: true, app_key: 'app', app_secret: 'secret', callback_token: CALLBACK_TOKEN, api_url: 'http://127.0.0.1:9' })

  it('auth - a signed callback needs no API key; an unsigned one is 401 Unauthorized (text, spec §4.4)', async () => {
    const { app } = await start({ ...withKeys, chat: chat() })
    const signed = await app.inject({
      method: 'POST',
      url: `/v1/chat/callback?${signedQuery(CALLBACK_TOKEN, Date.now())}`,
      payload: textCallback('hi', { robotCode: undefined, msgtype: 'picture' }),
    })
    expect(signed.statusCode).toBe(200)
    const unsigned = await app.inject({ method: 'POST', url: '/v1/chat/callback', payload: textCallback('hi') })
    expect(unsigned.statusCode).toBe(401)
    expect(unsigned.body).toBe('Unauthorized')
  })
})

describe('guard - the WebSocket handshake', () => {
  it('auth - X-API-Key header and api_key query open the WebSocket', async () => {
    const { wsUrl } = await start(withKeys, true)
    expect(await handshake(wsUrl, { headers: { 'x-api-key': KEY_OLD } })).toEqual({ opened: true })
    expect(await handshake(`${wsUrl}?api_key=${KEY_NEW}`)).toEqual({ opened: true })
    expect(await handshake(`${wsUrl}?api_key=${KEY_NEW}`, { headers: { 'x-api-key': KEY_OLD } })).toEqual({ opened: true })
  })

  it('auth - missing, wrong, or Bearer-only keys are refused with 401 before the upgrade', async () => {
    const { wsUrl } = await start(withKeys, true)
    for (const [url, headers] of [
      [wsUrl, {}],
      [`${wsUrl}?api_key=wrong`, {}],
      [wsUrl, { 'x-api-key': 'wrong' }],
      [`${wsUrl}?api_key=wrong`, { 'x-api-key': KEY_OLD }],
      [wsUrl, { authorization: `Bearer ${KEY_OLD}` }],
    ] as const) {
      const result = await handshake(url, { headers })
      expect(result, `${url} ${JSON.stringify(headers)}`).toMatchObject({
        opened: false,
        status: 401,
        body: { code: 'UNAUTHORIZED', message: expect.stringContaining('api_key') },
      })
    }
  })

  it('origins - a listed browser origin and no origin connect; another origin is refused with 403', async () => {
    const { wsUrl } = await start({ auth: { allowed_origins: ['https://app.example.com'] } }, true)
    expect(await handshake(wsUrl)).toEqual({ opened: true })
    expect(await handshake(wsUrl, { headers: { origin: 'https://app.example.com' } })).toEqual({ opened: true })
    expect(await handshake(wsUrl, { headers: { origin: 'https://evil.example' } })).toMatchObject({
      opened: false,
      status: 403,
      body: { code: 'FORBIDDEN_ORIGIN' },
    })
    expect(await handshake(wsUrl, { headers: { origin: 'null' } })).toMatchObject({ opened: false, status: 403 })
  })

  it('origins - by default every browser origin is refused (a web page cannot drive a local agent)', async () => {
    const { wsUrl, app } = await start({}, true)
    expect(await handshake(wsUrl, { headers: { origin: 'http://127.0.0.1:8080' } })).toMatchObject({ opened: false, status: 403 })
    // REST too: a rebinding page's same-origin POST carries an Origin.
    const response = await app.inject({
      method: 'POST',
      url: '/v1/agent/chat',
      headers: { origin: 'http://attacker.example' },
      payload: { message: 'rm -rf ~' },
    })
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual({ error: { code: 'FORBIDDEN_ORIGIN', message: expect.any(String) } })
  })

  it('errors - a plain GET of the WebSocket route is 426 {code, message}', async () => {
    const { app } = await start()
    const response = await app.inject({ method: 'GET', url: '/ws/v1/agent' })
    expect(response.statusCode).toBe(426)
    expect(response.json()).toEqual({ code: 'UPGRADE_REQUIRED', message: expect.stringContaining('Upgrade: websocket') })
  })
})

describe('guard - limits', () => {
  it('limits - a body over limits.max_body is 413 in each route shape', async () => {
    const { app } = await start({ limits: { max_body: '1KiB' } })
    const big = JSON.stringify({ message: 'x'.repeat(2048) })
    const opencode = await app.inject({ method: 'POST', url: '/session', headers: { 'content-type': 'application/json' }, payload: big })
    expect(opencode.statusCode).toBe(413)
    expect(opencode.json()).toMatchObject({ name: 'UnknownError', data: { code: 'PAYLOAD_TOO_LARGE' } })
    const chat = await app.inject({ method: 'POST', url: '/v1/agent/chat', headers: { 'content-type': 'application/json' }, payload: big })
    expect(chat.statusCode).toBe(413)
    expect(chat.json()).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } })
    // Under the limit the same route works.
    expect((await app.inject({ method: 'POST', url: '/session', payload: { title: 'small' } })).statusCode).toBe(200)
  })

  it('limits - a frame over limits.max_frame gets an error event and the connection stays open', async () => {
    const { wsUrl } = await start({ limits: { max_frame: '1KiB' } }, true)
    const client = await WsClient.connect(wsUrl)
    clients.push(client)
    client.send(JSON.stringify({ type: 'version', request_id: 1, pad: 'x'.repeat(2048) }))
    expect(await client.event('error')).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('1024') } })
    client.send('{not json')
    expect(await client.next((msg) => msg.event === 'error' && (msg.error as { code: string }).code === 'BAD_JSON')).toBeDefined()
    expect(client.socket.readyState).toBe(client.socket.OPEN)
  })

  it('limits - a frame beyond the hard cap is closed by ws with 1009, and the server serves on', async () => {
    const { wsUrl } = await start({ limits: { max_frame: '1KiB' } }, true)
    const client = await WsClient.connect(wsUrl)
    clients.push(client)
    const closed = new Promise<number>((resolve) => client.socket.once('close', (code) => resolve(code)))
    client.send('x'.repeat(1024 + 64 * 1024 + 1))
    expect(await closed).toBe(1009)
    const next = await WsClient.connect(wsUrl)
    clients.push(next)
    next.send('{}')
    expect(await next.event('error')).toMatchObject({ error: { code: 'UNKNOWN_TYPE' } })
  })

  it('limits - the rate per key is 429 with Retry-After; other keys and later requests pass', async () => {
    const clock = manualClock()
    const { app } = await start({ ...withKeys, limits: { rate: 1, burst: 2 }, now: clock.now })
    const get = (key: string) => app.inject({ method: 'GET', url: '/session', headers: { 'x-api-key': key } })
    expect((await get(KEY_OLD)).statusCode).toBe(200)
    expect((await get(KEY_OLD)).statusCode).toBe(200)
    const limited = await get(KEY_OLD)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['retry-after']).toBe('1')
    expect(limited.json()).toMatchObject({ name: 'UnknownError', data: { code: 'RATE_LIMITED' } })
    expect((await get(KEY_NEW)).statusCode).toBe(200)
    clock.advance(1_000)
    expect((await get(KEY_OLD)).statusCode).toBe(200)
  })

  it('limits - WebSocket frames count against the rate: an error event, the connection stays', async () => {
    const clock = manualClock()
    const { wsUrl } = await start({ limits: { rate: 1, burst: 2 }, now: clock.now }, true)
    const client = await WsClient.connect(wsUrl) // the handshake takes one token
    clients.push(client)
    client.send('{}')
    expect(await client.next((msg) => (msg.error as { code?: string } | undefined)?.code === 'UNKNOWN_TYPE')).toBeDefined()
    client.send('{}')
    expect(await client.next((msg) => (msg.error as { code?: string } | undefined)?.code === 'RATE_LIMITED')).toBeDefined()
    clock.advance(1_000)
    client.send('{"type":"nope","request_id":7}')
    expect(await client.next((msg) => msg.request_id === 7)).toMatchObject({ error: { code: 'UNKNOWN_TYPE' } })
  })

  it('limits - every 503 carries Retry-After (here: no runner)', async () => {
    const { app } = await start({ limits: { retry_after: '7s' } })
    const response = await app.inject({ method: 'POST', url: '/v1/agent/chat', payload: { message: 'hi' } })
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('7')
    expect(response.json()).toMatchObject({ error: { code: 'RUNNER_UNAVAILABLE' } })
  })
})

describe('guard - draining', () => {
  it('shutdown - while draining, new streams and new turns are 503 SHUTTING_DOWN; reads still work', async () => {
    const gw = await start({}, true)
    const client = await WsClient.connect(gw.wsUrl)
    clients.push(client)
    gw.lifecycle.drain()
    const refused = await handshake(gw.wsUrl)
    expect(refused).toMatchObject({ opened: false, status: 503, body: { code: 'SHUTTING_DOWN' } })
    expect((refused as { headers: Record<string, string> }).headers['retry-after']).toBe('5')
    const sse = await gw.app.inject({ method: 'GET', url: '/global/event' })
    expect(sse.statusCode).toBe(503)
    expect(sse.json()).toMatchObject({ data: { code: 'SHUTTING_DOWN' } })
    const chat = await gw.app.inject({ method: 'POST', url: '/v1/agent/chat', payload: { message: 'hi' } })
    expect(chat.statusCode).toBe(503)
    expect(chat.json()).toMatchObject({ error: { code: 'SHUTTING_DOWN' } })
    client.send({ type: 'execute', request_id: 3, prompt: 'hi' })
    expect(await client.next((msg) => msg.request_id === 3)).toMatchObject({ event: 'error', error: { code: 'SHUTTING_DOWN' } })
    expect((await gw.app.inject({ method: 'GET', url: '/session' })).statusCode).toBe(200)
    expect((await gw.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200) // the stand-in; the real probe answers 503
  })
})
