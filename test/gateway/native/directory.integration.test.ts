/**
 * The session directory (GET /v1/sessions, GET/DELETE /v1/sessions/{id}, the JSON page of
 * /v1/sessions/{id}/events) against the real service with the fake CLI: sessions made on every
 * surface (WebSocket, OpenCode REST, POST /v1/agent/chat), two tenants, in dev mode (memory
 * state) and production mode (a real nats-server, JetStream KV registry, runner and gateway apart).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { SessionEventsPage, SessionList, SessionSummary } from '../../../contract/sessions.ts'
import { startNats, type NatsFixture } from '../../fixtures/nats-server.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { TENANT_KEYS, TENANTS } from '../../fixtures/tenants.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

type Who = 'owner' | 'other' | 'none'
const KEYS = { owner: TENANT_KEYS.acme, other: TENANT_KEYS.globex } as const
const auth = (who: Who): Record<string, string> => (who === 'none' ? {} : { 'x-api-key': KEYS[who] })

interface Deployment {
  /** Where clients connect. */
  gateway: Stack
  close(): Promise<void>
}

async function devMode(): Promise<Deployment> {
  const gateway = await startStack(TENANTS)
  return { gateway, close: () => gateway.close() }
}

async function productionMode(): Promise<Deployment> {
  const nats: NatsFixture = await startNats()
  const shared = { ...TENANTS, nats: { url: nats.url, prefix: `directory-${process.pid}-${Date.now().toString(36)}` } }
  const runner = await startStack(shared, 'runner')
  const gateway = await startStack(shared, 'gateway')
  return {
    gateway,
    async close() {
      await gateway.close()
      await runner.close()
      await nats.stop()
    },
  }
}

describe.each([
  ['dev', devMode],
  ['production', productionMode],
])('directory - %s mode', (_mode, deploy) => {
  let deployment: Deployment
  let url: string
  const ids = { ws: `ws-${randomUUID()}`, rest: `rest-${randomUUID()}`, chat: `chat-${randomUUID()}`, foreign: `foreign-${randomUUID()}` }

  const http = async (who: Who, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const response = await fetch(url + path, {
      method,
      headers: { ...auth(who), ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: response.status, body: (await response.json()) as any }
  }

  const turnOverWs = async (who: Who, sessionId: string, prompt: string) => {
    const client = await WsClient.connect(deployment.gateway.wsUrl, auth(who))
    client.send({ type: 'execute', session_id: sessionId, prompt, request_id: 'r' })
    const end = await client.next((msg) => msg.request_id === 'r' && (msg.event === 'completed' || msg.event === 'error'))
    await client.close()
    expect(end.event).toBe('completed')
  }

  /** Waits until the session's record says its turns are done (a REST prompt is answered before its turn ends). */
  const idleAfter = (sessionId: string, turns: number): Promise<SessionSummary> =>
    vi.waitFor(
      async () => {
        const answer = await http('owner', 'GET', `/v1/sessions/${encodeURIComponent(sessionId)}`)
        expect(answer).toMatchObject({ status: 200, body: { state: 'idle', stats: { turns: expect.any(Number) } } })
        expect(answer.body.stats.turns).toBeGreaterThanOrEqual(turns)
        return answer.body as SessionSummary
      },
      { timeout: 20_000 },
    )

  beforeAll(async () => {
    deployment = await deploy()
    url = deployment.gateway.url
    // One session per surface for acme, one for globex.
    await turnOverWs('owner', ids.ws, 'hello over the socket')
    expect((await http('owner', 'POST', '/session', {}, { session_id: ids.rest, work_dir: 'rest-dir' })).status).toBe(200)
    expect((await http('owner', 'POST', `/session/${ids.rest}/prompt_async`, {}, { prompt: 'hello over REST' })).status).toBe(202)
    expect((await http('owner', 'POST', '/v1/agent/chat', {}, { session_id: ids.chat, message: 'hello over chat' })).status).toBe(200)
    await turnOverWs('other', ids.foreign, 'a globex secret')
    await idleAfter(ids.rest, 1)
  }, 60_000)
  afterAll(() => deployment?.close())

  it('directory - GET /v1/sessions lists every session of the tenant, whichever surface made it, and no other', async () => {
    const mine = await http('owner', 'GET', '/v1/sessions')
    expect(mine.status).toBe(200)
    const listed = (mine.body as SessionList).sessions.map((session) => session.session_id)
    expect(listed.sort()).toEqual([ids.ws, ids.rest, ids.chat].sort())
    expect(mine.body.next_cursor).toBeNull()
    const theirs = await http('other', 'GET', '/v1/sessions')
    expect((theirs.body as SessionList).sessions.map((session) => session.session_id)).toEqual([ids.foreign])
    expect((await http('none', 'GET', '/v1/sessions')).status).toBe(401)
  })

  it('directory - pages by cursor, newest first, and filters by state', async () => {
    const first = (await http('owner', 'GET', '/v1/sessions?limit=2')).body as SessionList
    expect(first.sessions).toHaveLength(2)
    expect(first.next_cursor).toEqual(expect.any(String))
    const second = (await http('owner', 'GET', `/v1/sessions?limit=2&cursor=${first.next_cursor}`)).body as SessionList
    expect(second.sessions).toHaveLength(1)
    expect(second.next_cursor).toBeNull()
    const all = [...first.sessions, ...second.sessions]
    expect(new Set(all.map((session) => session.session_id)).size).toBe(3)
    expect(all.map((session) => session.created_at)).toEqual(all.map((session) => session.created_at).sort((a, b) => b - a))
    expect(((await http('owner', 'GET', '/v1/sessions?state=idle')).body as SessionList).sessions).toHaveLength(3)
    expect(((await http('owner', 'GET', '/v1/sessions?state=busy')).body as SessionList).sessions).toHaveLength(0)
  })

  it.each([
    ['/v1/sessions?limit=0', 'limit'],
    ['/v1/sessions?limit=201', 'limit'],
    ['/v1/sessions?state=asleep', 'state'],
    ['/v1/sessions?cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['/v1/sessions?page=2', 'page'],
  ])('directory - a bad query %s is a 400 naming the parameter', async (path, parameter) => {
    const answer = await http('owner', 'GET', path)
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({ code: 'BAD_REQUEST', message: expect.stringContaining(parameter) })
  })

  it('directory - GET /v1/sessions/{id}: state, owner runner, work_dir, times, queued turns, stats', async () => {
    const session = await idleAfter(ids.rest, 1)
    expect(session).toMatchObject({
      session_id: ids.rest,
      state: 'idle',
      work_dir: expect.stringMatching(/^\/.*\/rest-dir$/),
      engine: 'claude',
      turn_id: null,
      queued_turns: 0,
      stats: { turns: 1 },
    })
    expect(session.owner).toEqual(expect.any(String))
    expect(session.last_active).toBeGreaterThanOrEqual(session.created_at)
  })

  /** The answer of each route for each caller: another tenant's session answers exactly as an unknown one. */
  const ROUTES = [
    { name: 'GET /v1/sessions/{id}', method: 'GET', path: (id: string) => `/v1/sessions/${id}`, headers: {} },
    {
      name: 'GET /v1/sessions/{id}/events (JSON)',
      method: 'GET',
      path: (id: string) => `/v1/sessions/${id}/events?after_seq=0`,
      headers: { accept: 'application/json' },
    },
  ] as const

  it.each(ROUTES)('directory - $name: owner 200, other tenant 404 as for an unknown id, no key 401', async ({ method, path, headers }) => {
    expect((await http('owner', method, path(ids.ws), headers)).status).toBe(200)
    const foreign = await http('owner', method, path(ids.foreign), headers)
    const unknown = await http('owner', method, path('never-used'), headers)
    expect(foreign).toEqual({ status: 404, body: { code: 'SESSION_NOT_FOUND', message: `Session not found: ${ids.foreign}` } })
    expect(unknown).toEqual({ status: 404, body: { code: 'SESSION_NOT_FOUND', message: 'Session not found: never-used' } })
    expect((await http('none', method, path(ids.ws), headers)).status).toBe(401)
  })

  it('directory - the JSON page of events: stored events with their seq, after_seq and limit page through them', async () => {
    const all = (await http('owner', 'GET', `/v1/sessions/${ids.ws}/events`, { accept: 'application/json' })).body as SessionEventsPage
    // turn_started is the service's own (never sent to clients), deltas are live only: neither is here.
    expect(all.events.map((event) => event.event)).toEqual(['answer', 'session_stats', 'completed'])
    expect(all.events.every((event) => event.session_id === ids.ws && typeof event.seq === 'number')).toBe(true)
    expect(all.has_more).toBe(false)
    const first = (await http('owner', 'GET', `/v1/sessions/${ids.ws}/events?limit=1`, { accept: 'application/json' })).body as SessionEventsPage
    expect(first).toMatchObject({ events: [all.events[0]], next_after_seq: all.events[0]!.seq, has_more: true })
    const rest = (await http('owner', 'GET', `/v1/sessions/${ids.ws}/events?after_seq=${first.next_after_seq}`, { accept: 'application/json' }))
      .body as SessionEventsPage
    expect(rest.events).toEqual(all.events.slice(1))
    expect(rest.next_after_seq).toBe(all.events.at(-1)!.seq)
  })

  it('directory - DELETE /v1/sessions/{id}: other tenant 404, no key 401, owner stops and forgets it', async () => {
    expect((await http('other', 'DELETE', `/v1/sessions/${ids.chat}`)).status).toBe(404)
    expect((await http('none', 'DELETE', `/v1/sessions/${ids.chat}`)).status).toBe(401)
    expect(await http('owner', 'DELETE', `/v1/sessions/${ids.chat}`)).toEqual({ status: 200, body: { session_id: ids.chat, deleted: true } })
    expect((await http('owner', 'GET', `/v1/sessions/${ids.chat}`)).status).toBe(404)
    const listed = ((await http('owner', 'GET', '/v1/sessions')).body as SessionList).sessions.map((session) => session.session_id)
    expect(listed).not.toContain(ids.chat)
    expect((await http('owner', 'DELETE', `/v1/sessions/${ids.chat}`)).status).toBe(404)
  })
})
