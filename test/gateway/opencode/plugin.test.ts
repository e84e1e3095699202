/**
 * The plugin on a bare fastify instance (no runner): heartbeats, shutdown
 * with open streams, and a global onRequest hook (as authentication will be)
 * covering every route, including the event streams.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryBus } from '../../../bus/mod.ts'
import { registerOpencode } from '../../../gateway/opencode/mod.ts'
import { RunnerClient } from '../../../gateway/runner-client.ts'
import { SessionHub } from '../../../gateway/session-hub.ts'
import { SseClient } from '../../fixtures/sse-client.ts'
import { MemoryRegistry } from '../../../state/mod.ts'

const log = pino({ level: 'silent' })

async function build(options: { heartbeatMs?: number; hook?: boolean } = {}): Promise<{ app: FastifyInstance; url: string }> {
  const bus = new MemoryBus()
  const app = Fastify()
  const runners = new RunnerClient(bus, 'test', 500, new MemoryRegistry())
  const hub = new SessionHub(bus, 'test', log)
  await registerOpencode(app, { runners, hub, log, heartbeatMs: options.heartbeatMs ?? 0, auth: options.hook ?? false })
  if (options.hook) {
    // Added after the plugin, as a later global hook would be.
    app.addHook('onRequest', async (request, reply) => {
      if (request.headers['x-api-key'] !== 'k') return reply.code(401).send({ error: { code: 'UNAUTHORIZED', message: 'missing or invalid key' } })
    })
  }
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url }
}

describe('opencode plugin - streams and hooks', () => {
  const apps: FastifyInstance[] = []
  const streams: SseClient[] = []
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close()
    await Promise.all(apps.splice(0).map((app) => app.close()))
  })

  it('heartbeat - server.heartbeat on /event and, in an envelope, on /global/event', async () => {
    const { app, url } = await build({ heartbeatMs: 30 })
    apps.push(app)
    const bare = await SseClient.open(`${url}/event`)
    const global = await SseClient.open(`${url}/global/event`)
    streams.push(bare, global)
    await bare.next((d) => d.type === 'server.heartbeat' && bare.data.filter((x) => x.type === 'server.heartbeat').length >= 2)
    await global.next((d) => d.payload?.type === 'server.heartbeat')
    expect(bare.data[0]).toMatchObject({ type: 'server.connected', properties: {} })
    expect(bare.data[1]).toEqual({ id: expect.stringMatching(/^evt_/), type: 'server.heartbeat', properties: {} })
    expect(global.data[0]).toEqual({ directory: '/', payload: { id: expect.stringMatching(/^evt_/), type: 'server.connected', properties: {} } })
  })

  it('close - shutting the server down ends the open streams instead of waiting on them', async () => {
    const { app, url } = await build()
    const stream = await SseClient.open(`${url}/event`)
    streams.push(stream)
    await stream.next((d) => d.type === 'server.connected')
    await app.close()
    await stream.untilEnd()
    expect(stream.ended).toBe(true)
  })

  it('a global onRequest hook covers every route of the layer, the event streams included', async () => {
    const { app, url } = await build({ hook: true })
    apps.push(app)
    const routes: [string, string][] = [
      ['GET', '/event'],
      ['GET', '/global/event'],
      ['POST', '/session'],
      ['GET', '/session'],
      ['GET', '/session/status'],
      ['GET', '/session/x'],
      ['DELETE', '/session/x'],
      ['POST', '/session/x/abort'],
      ['GET', '/session/x/message'],
      ['POST', '/session/x/message'],
      ['POST', '/session/x/prompt_async'],
      ['GET', '/config'],
    ]
    for (const [method, path] of routes) {
      const response = await fetch(url + path, { method })
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 })
    }
    const allowed = await fetch(`${url}/session`, { method: 'POST', headers: { 'x-api-key': 'k' } })
    expect(allowed.status).toBe(200)
  })

  it('config - with no runner answering, still 200 without engines; auth as configured', async () => {
    const { app, url } = await build({ hook: true })
    apps.push(app)
    const response = await fetch(`${url}/config`, { headers: { 'x-api-key': 'k' } })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ engines: [], auth: { enabled: true } })
  })

  it('prompt - no runner: the execute fails with its code and the session is idle again', async () => {
    const { app, url } = await build()
    apps.push(app)
    const events = await SseClient.open(`${url}/event`)
    streams.push(events)
    const session = (await (await fetch(`${url}/session`, { method: 'POST' })).json()) as { id: string }
    const response = await fetch(`${url}/session/${session.id}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x' }),
    })
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ name: 'UnknownError', data: { code: 'RUNNER_UNAVAILABLE' } })
    await events.next((d) => d.type === 'session.idle' && d.properties.sessionID === session.id)
    const statuses = events.data.filter((d) => d.type === 'session.status').map((d) => d.properties.status.type)
    expect(statuses).toEqual(['busy', 'idle'])
  })
})
