/**
 * Tenancy (issue 15, part 3): every surface × {owner, other tenant, no key},
 * against the real service in-process with the fake CLI and real clients
 * (ws, fetch, the OpenCode SDK). Another tenant's session must look exactly
 * like one that does not exist.
 */
import { createOpencodeClient } from '@opencode-ai/sdk/v2/client'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handshake } from '../../fixtures/ws-handshake.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { TENANT_KEYS, TENANTS } from '../../fixtures/tenants.ts'
import { WsClient } from '../../fixtures/ws-client.ts'
import { SseClient } from '../../fixtures/sse-client.ts'

const KEYS = { owner: TENANT_KEYS.acme, other: TENANT_KEYS.globex } as const

type Who = 'owner' | 'other' | 'none'
/** What a surface answered: served, SESSION_NOT_FOUND (exactly as a missing session), or 401. */
type Outcome = 'ok' | 'not_found' | 'unauthorized' | `unexpected: ${string}`

const EXPECTED: Record<Who, Outcome> = { owner: 'ok', other: 'not_found', none: 'unauthorized' }

const headers = (who: Who): Record<string, string> => (who === 'none' ? {} : { authorization: `Bearer ${KEYS[who]}` })
const wsHeaders = (who: Who): Record<string, string> => (who === 'none' ? {} : { 'x-api-key': KEYS[who] })

describe('tenancy - every surface × {owner, other tenant, no key}', () => {
  let stack: Stack
  /** A session of acme with one finished turn (for reads and replays). */
  let shared: string
  const clients: WsClient[] = []
  const streams: SseClient[] = []

  const http = async (who: Who, method: string, path: string, body?: unknown) => {
    const response = await fetch(stack.url + path, {
      method,
      headers: { ...headers(who), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    let json: any
    try {
      json = JSON.parse(text)
    } catch {
      json = text
    }
    return { status: response.status, body: json }
  }

  /** A REST answer as an outcome; a 404 must be the very answer a never-used id gets. */
  const httpOutcome = (answer: { status: number; body: any }, sessionId: string, okStatus = 200): Outcome => {
    if (answer.status === 401) return 'unauthorized'
    if (answer.status === okStatus) return 'ok'
    if (answer.status === 404) {
      const text = JSON.stringify(answer.body)
      const code = answer.body?.code ?? answer.body?.error?.code ?? (answer.body?.name === 'NotFoundError' ? 'SESSION_NOT_FOUND' : undefined)
      if (code === 'SESSION_NOT_FOUND' && text.includes(sessionId) && !/tenant|owner|acme/i.test(text)) return 'not_found'
    }
    return `unexpected: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`
  }

  /** A stream's answer: `ok` once the session's `completed` event came on it; else its refusal as an outcome. */
  const sseOutcome = async (response: Response, sessionId: string): Promise<Outcome> => {
    if (response.status !== 200) return httpOutcome({ status: response.status, body: await response.json() }, sessionId)
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    try {
      while (!/"event":"completed"/.test(text)) {
        const { value, done } = await reader.read()
        if (done) return `unexpected: stream ended: ${text.slice(-200)}`
        text += value
      }
    } finally {
      await reader.cancel()
    }
    return text.includes(`"session_id":${JSON.stringify(sessionId)}`) ? 'ok' : `unexpected: ${text.slice(-200)}`
  }

  const ws = async (who: Who, query = ''): Promise<WsClient | Outcome> => {
    if (who === 'none') {
      const refused = await handshake(stack.wsUrl + query)
      return !refused.opened && refused.status === 401 ? 'unauthorized' : `unexpected: handshake ${JSON.stringify(refused)}`
    }
    const client = await WsClient.connect(stack.wsUrl + query, wsHeaders(who))
    clients.push(client)
    return client
  }

  /** Sends a frame and waits for the answer to its request_id: `ok` when `done` matches, `not_found` on SESSION_NOT_FOUND. */
  const wsRequest = async (who: Who, frame: Record<string, unknown>, done: (msg: Record<string, unknown>) => boolean): Promise<Outcome> => {
    const client = await ws(who)
    if (typeof client === 'string') return client
    const requestId = randomUUID()
    client.send({ ...frame, request_id: requestId })
    const answer = await client.next((msg) => msg.request_id === requestId && (msg.event === 'error' || done(msg)))
    if (answer.event !== 'error') return 'ok'
    const error = answer.error as { code: string; message: string }
    return error.code === 'SESSION_NOT_FOUND' && error.message === `Session not found: ${String(frame.session_id)}`
      ? 'not_found'
      : `unexpected: ${JSON.stringify(answer)}`
  }

  /** A session acme made through REST (claimed, no turn). */
  const acmeSession = async () => {
    const id = `t-${randomUUID()}`
    const created = await http('owner', 'POST', '/session', { session_id: id })
    expect(created.status).toBe(200)
    return id
  }

  beforeAll(async () => {
    stack = await startStack(TENANTS)
    shared = await acmeSession()
    const client = (await ws('owner')) as WsClient
    client.send({ type: 'execute', session_id: shared, prompt: 'hello', request_id: 'setup' })
    await client.next((msg) => msg.request_id === 'setup' && msg.event === 'completed')
  })
  afterAll(async () => {
    for (const stream of streams) stream.close()
    for (const client of clients) await client.close()
    await stack?.close()
  })

  const surfaces: { surface: string; run: (who: Who) => Promise<Outcome> }[] = [
    {
      surface: 'WebSocket execute',
      run: async (who) => wsRequest(who, { type: 'execute', session_id: await acmeSession(), prompt: 'hi' }, (msg) => msg.event === 'completed'),
    },
    {
      surface: 'WebSocket stop',
      run: async (who) => wsRequest(who, { type: 'stop', session_id: await acmeSession(), reason: 'test' }, (msg) => msg.event === 'stopped'),
    },
    { surface: 'WebSocket stats', run: (who) => wsRequest(who, { type: 'stats', session_id: shared }, (msg) => msg.event === 'stats') },
    {
      surface: 'WebSocket attach with last_seq (replay)',
      run: async (who) => {
        const client = await ws(who)
        if (typeof client === 'string') return client
        client.send({ type: 'attach', session_id: shared, last_seq: 0 })
        const answer = await client.next((msg) => msg.session_id === shared && (msg.event === 'error' || msg.event === 'completed'))
        if (answer.event === 'completed') return 'ok'
        // Nothing of the session reached the other tenant: only the refusal.
        const leaked = client.eventsOf(shared).filter((msg) => msg.event !== 'error')
        return (answer.error as { code: string }).code === 'SESSION_NOT_FOUND' && leaked.length === 0 ? 'not_found' : `unexpected: ${JSON.stringify(answer)}`
      },
    },
    {
      surface: 'WebSocket ?session_id=&last_seq= (replay on connect)',
      run: async (who) => {
        const client = await ws(who, `?session_id=${encodeURIComponent(shared)}&last_seq=0`)
        if (typeof client === 'string') return client
        const answer = await client.next((msg) => msg.session_id === shared && (msg.event === 'error' || msg.event === 'completed'))
        if (answer.event === 'completed') return 'ok'
        return (answer.error as { code: string }).code === 'SESSION_NOT_FOUND' && client.eventsOf(shared).length === 1
          ? 'not_found'
          : `unexpected: ${JSON.stringify(answer)}`
      },
    },
    {
      surface: 'WebSocket quick-start session_start + prompt',
      run: async (who) => {
        const id = await acmeSession()
        const client = await ws(who)
        if (typeof client === 'string') return client
        client.send({ type: 'session_start', session_id: id })
        client.send({ type: 'prompt', content: 'hi' })
        const answer = await client.next((msg) => msg.type === 'completed' || msg.type === 'error')
        const payload = answer.payload as { session_id?: string; error?: { code: string } }
        if (answer.type === 'completed') return payload.session_id === id ? 'ok' : `unexpected: ${JSON.stringify(answer)}`
        return payload.error?.code === 'SESSION_NOT_FOUND' && payload.session_id === id ? 'not_found' : `unexpected: ${JSON.stringify(answer)}`
      },
    },
    {
      surface: 'SSE /v1/sessions/{id}/events with Last-Event-ID (replay)',
      run: async (who) => {
        const response = await fetch(`${stack.url}/v1/sessions/${shared}/events`, {
          headers: { ...headers(who), accept: 'text/event-stream', 'last-event-id': '0' },
        })
        return sseOutcome(response, shared)
      },
    },
    { surface: 'REST GET /session/{id}', run: async (who) => httpOutcome(await http(who, 'GET', `/session/${shared}`), shared) },
    { surface: 'REST GET /session/{id}/message', run: async (who) => httpOutcome(await http(who, 'GET', `/session/${shared}/message`), shared) },
    {
      surface: 'REST POST /session with an existing id',
      run: async (who) => httpOutcome(await http(who, 'POST', '/session', { session_id: shared }), shared),
    },
    {
      surface: 'REST POST /session/{id}/prompt_async',
      run: async (who) => {
        const id = await acmeSession()
        return httpOutcome(await http(who, 'POST', `/session/${id}/prompt_async`, { prompt: 'hi' }), id, 202)
      },
    },
    {
      surface: 'REST POST /session/{id}/message',
      run: async (who) => {
        const id = await acmeSession()
        return httpOutcome(await http(who, 'POST', `/session/${id}/message`, { parts: [{ type: 'text', text: 'hi' }] }), id)
      },
    },
    {
      surface: 'REST POST /session/{id}/abort',
      run: async (who) => {
        const id = await acmeSession()
        return httpOutcome(await http(who, 'POST', `/session/${id}/abort`), id)
      },
    },
    {
      surface: 'REST DELETE /session/{id}',
      run: async (who) => {
        const id = await acmeSession()
        const outcome = httpOutcome(await http(who, 'DELETE', `/session/${id}`), id)
        // Not deleted by anyone but its owner.
        if (who !== 'owner') expect((await http('owner', 'GET', `/session/${id}`)).status).toBe(200)
        return outcome
      },
    },
    {
      surface: 'REST GET /session (list)',
      run: async (who) => {
        const answer = await http(who, 'GET', '/session')
        if (answer.status !== 200) return httpOutcome(answer, shared)
        return (answer.body as { id: string }[]).some((info) => info.id === shared) ? 'ok' : 'not_found'
      },
    },
    {
      surface: 'REST GET /session/status',
      run: async (who) => {
        const answer = await http(who, 'GET', '/session/status')
        if (answer.status !== 200) return httpOutcome(answer, shared)
        return shared in answer.body ? 'ok' : 'not_found'
      },
    },
    {
      surface: 'POST /v1/agent/chat (JSON)',
      run: async (who) => {
        const id = await acmeSession()
        return httpOutcome(await http(who, 'POST', '/v1/agent/chat', { session_id: id, message: 'hi' }), id)
      },
    },
    {
      surface: 'POST /v1/agent/chat (SSE)',
      run: async (who) => {
        const id = await acmeSession()
        const response = await fetch(`${stack.url}/v1/agent/chat`, {
          method: 'POST',
          headers: { ...headers(who), accept: 'text/event-stream', 'content-type': 'application/json' },
          body: JSON.stringify({ session_id: id, message: 'hi' }),
        })
        return sseOutcome(response, id)
      },
    },
    {
      surface: 'OpenCode SDK session.get',
      run: async (who) => {
        const client = createOpencodeClient({ baseUrl: stack.url, headers: headers(who) })
        const answer = await client.session.get({ sessionID: shared })
        return httpOutcome({ status: answer.response.status, body: answer.data ?? answer.error }, shared)
      },
    },
  ]

  for (const { surface, run } of surfaces) {
    for (const who of ['owner', 'other', 'none'] as const) {
      it(`tenancy - ${surface} - ${who}: ${EXPECTED[who]}`, async () => {
        expect(await run(who)).toBe(EXPECTED[who])
      })
    }
  }

  it("tenancy - /event and /global/event: a session's events reach its own tenant's subscribers only; no key: 401", async () => {
    const open = async (who: Who, path: string) => {
      const stream = await SseClient.open(stack.url + path, headers(who))
      streams.push(stream)
      return stream
    }
    expect((await open('none', '/event')).response.status).toBe(401)
    expect((await open('none', '/global/event')).response.status).toBe(401)
    const owner = await open('owner', '/event')
    const otherBare = await open('other', '/event')
    const otherGlobal = await open('other', '/global/event')
    for (const stream of [owner, otherBare, otherGlobal]) await stream.next((data) => (data.payload ?? data).type === 'server.connected')
    const id = await acmeSession()
    expect((await http('owner', 'POST', `/session/${id}/prompt_async`, { prompt: 'hi' })).status).toBe(202)
    await owner.next((data) => data.type === 'session.idle' && data.properties.sessionID === id)
    // A later event of globex's own: once it arrived, anything published before it would have too.
    const mark = `t-${randomUUID()}`
    expect((await http('other', 'POST', '/session', { session_id: mark })).status).toBe(200)
    for (const stream of [otherBare, otherGlobal]) {
      await stream.next((data) => (data.payload ?? data).type === 'session.created' && (data.payload ?? data).properties.sessionID === mark)
      expect(stream.data.filter((data) => JSON.stringify(data).includes(id))).toEqual([])
    }
    expect(owner.data.filter((data) => JSON.stringify(data).includes(mark))).toEqual([])
  })

  it("tenancy - another tenant's execute never runs in the owner's session, and an unknown id answers the same", async () => {
    const owner = (await ws('owner')) as WsClient
    const stats = async () => {
      owner.send({ type: 'stats', session_id: shared, request_id: 'st' })
      const answer = await owner.next((msg) => msg.request_id === 'st' && msg.event === 'stats')
      owner.messages.splice(owner.messages.indexOf(answer), 1)
      return answer.stats as { turns: number }
    }
    const before = await stats()
    expect(await wsRequest('other', { type: 'execute', session_id: shared, prompt: 'steal' }, (msg) => msg.event === 'completed')).toBe('not_found')
    expect(await wsRequest('other', { type: 'stats', session_id: shared }, (msg) => msg.event === 'stats')).toBe('not_found')
    expect((await stats()).turns).toBe(before.turns)
    // The very answer of an id nobody ever used.
    const unknown = `never-${randomUUID()}`
    expect(await wsRequest('other', { type: 'stats', session_id: unknown }, (msg) => msg.event === 'stats')).toBe('not_found')
    const missing = await http('other', 'GET', `/session/${unknown}`)
    const foreign = await http('other', 'GET', `/session/${shared}`)
    expect(foreign).toEqual({ status: missing.status, body: JSON.parse(JSON.stringify(missing.body).replaceAll(unknown, shared)) })
  })

  it('tenancy - every key of a tenant reaches its sessions (rotation); keys of two tenants at once: 401', async () => {
    const second = await fetch(`${stack.url}/session/${shared}`, { headers: { 'x-api-key': TENANT_KEYS.acme2 } })
    expect(second.status).toBe(200)
    const mixed = await fetch(`${stack.url}/session/${shared}`, { headers: { authorization: `Bearer ${KEYS.owner}`, 'x-api-key': KEYS.other } })
    expect(mixed.status).toBe(401)
    expect(await mixed.json()).toMatchObject({ data: { code: 'UNAUTHORIZED' } })
  })

  it('tenancy - the other tenant gets its own sessions on every surface, ids it names are its own', async () => {
    const id = `g-${randomUUID()}`
    expect(await wsRequest('other', { type: 'execute', session_id: id, prompt: 'hi' }, (msg) => msg.event === 'completed')).toBe('ok')
    expect(await wsRequest('owner', { type: 'stats', session_id: id }, (msg) => msg.event === 'stats')).toBe('not_found')
    expect(await wsRequest('other', { type: 'stats', session_id: id }, (msg) => msg.event === 'stats')).toBe('ok')
  })
})
