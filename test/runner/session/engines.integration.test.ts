import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAKE_CLAUDE, startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

/**
 * Engines per session, through the service: two engines of the fake CLI that
 * tell themselves apart by the model they report (`engines[].model` becomes
 * the CLI's --model, and every turn's stats name it).
 */
describe('engines per session', () => {
  let stack: Stack
  let client: WsClient
  const engine = (name: string) => ({ name, type: 'claude', command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, model: `model-${name}` })

  beforeAll(async () => {
    stack = await startStack({ engine: { default: 'beta' }, engines: [engine('alpha'), engine('beta')] })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client?.close()
    await stack?.close()
  })

  /** Runs one turn and answers its last event. */
  async function turn(sessionId: string, requestId: string, fields: Record<string, unknown> = {}) {
    client.send({ type: 'execute', request_id: requestId, session_id: sessionId, prompt: 'hello', ...fields })
    return client.next((msg) => msg.request_id === requestId && (msg.event === 'completed' || msg.event === 'error'), 20_000)
  }

  it('engines - a session that names none runs engine.default', async () => {
    expect(await turn('s-default', 'd1')).toMatchObject({ event: 'completed', turn_stats: { model: 'model-beta' } })
  })

  it('engines - a session runs the engine its first turn names, and keeps it when later turns name none', async () => {
    expect(await turn('s-alpha', 'a1', { engine: 'alpha' })).toMatchObject({ event: 'completed', turn_stats: { model: 'model-alpha' } })
    expect(await turn('s-alpha', 'a2')).toMatchObject({ event: 'completed', turn_stats: { model: 'model-alpha' } })
    expect(await turn('s-alpha', 'a3', { engine: 'alpha' })).toMatchObject({ event: 'completed', turn_stats: { model: 'model-alpha' } })
  })

  it('engines - another engine for a session that runs one is BAD_REQUEST, and the session goes on', async () => {
    await turn('s-keep', 'k1', { engine: 'alpha' })
    const refused = await turn('s-keep', 'k2', { engine: 'beta' })
    expect(refused).toMatchObject({
      event: 'error',
      error: {
        code: 'BAD_REQUEST',
        message: 'session s-keep runs engine "alpha"; a session keeps the engine of its first turn (start a new session for "beta")',
      },
    })
    expect(await turn('s-keep', 'k3')).toMatchObject({ event: 'completed', turn_stats: { model: 'model-alpha' } })
  })

  it('engines - an unknown engine is BAD_REQUEST naming the configured ones; a malformed name is refused by the frame check', async () => {
    expect(await turn('s-unknown', 'u1', { engine: 'codex' })).toMatchObject({
      error: { code: 'BAD_REQUEST', message: 'unknown engine "codex"; configured engines: alpha, beta' },
    })
    expect(await turn('s-unknown', 'u2', { engine: 'no such engine' })).toMatchObject({
      error: { code: 'BAD_REQUEST', message: expect.stringContaining('an engine name is 1 to 64 letters') },
    })
    // Refused before anything ran: the session can still pick its engine.
    expect(await turn('s-unknown', 'u3', { engine: 'alpha' })).toMatchObject({ event: 'completed', turn_stats: { model: 'model-alpha' } })
  })

  it('engines - an unknown engine leaves no session behind (nothing is claimed or created for it)', async () => {
    expect(await turn('s-never', 'n1', { engine: 'codex' })).toMatchObject({ error: { code: 'BAD_REQUEST' } })
    expect((await fetch(`${stack.url}/v1/sessions/s-never`)).status).toBe(404)
  })

  it("engines - version answers for the session's engine, a named one, or the default", async () => {
    const version = async (requestId: string, fields: Record<string, unknown>) => {
      client.send({ type: 'version', request_id: requestId, ...fields })
      return client.next((msg) => msg.request_id === requestId, 10_000)
    }
    await turn('s-version', 'v0', { engine: 'alpha' })
    expect(await version('v1', { session_id: 's-version' })).toMatchObject({ event: 'version', engine: 'alpha' })
    expect(await version('v2', { engine: 'alpha' })).toMatchObject({ event: 'version', engine: 'alpha' })
    expect(await version('v3', {})).toMatchObject({ event: 'version', engine: 'beta' })
  })

  it("engines - the directory and the marker record the session's engine", async () => {
    await turn('s-recorded', 'r1', { engine: 'alpha' })
    const summary = await fetch(`${stack.url}/v1/sessions/s-recorded`).then((response) => response.json())
    expect(summary).toMatchObject({ session_id: 's-recorded', engine: 'alpha' })
    // The marker is written as the turn ends, beside the events: wait for it.
    const markerDir = stack.config.session.marker_dir
    const marker = async () => {
      const names = (await readdir(markerDir)).filter((name) => name.endsWith('.json'))
      const markers = await Promise.all(names.map(async (name) => JSON.parse(await readFile(path.join(markerDir, name), 'utf8'))))
      return markers.find((found) => found.session_id === 's-recorded')
    }
    await expect.poll(marker, { timeout: 5_000 }).toMatchObject({ engine: 'alpha' })
  })

  it("engines - an OpenCode client picks the engine as a model of the service's provider; /config/providers lists them", async () => {
    const post = (url: string, body: unknown) =>
      fetch(`${stack.url}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const providers = await fetch(`${stack.url}/config/providers`).then((response) => response.json())
    expect(Object.keys(providers.providers[0].models)).toEqual(['default', 'alpha', 'beta'])
    const session = await post('/session', {}).then((response) => response.json())
    const answer = await post(`/session/${session.id}/message`, {
      parts: [{ type: 'text', text: 'hello' }],
      model: { providerID: 'agent-runtime', modelID: 'alpha' },
    })
    expect(answer.status).toBe(200)
    expect(await fetch(`${stack.url}/v1/sessions/${session.id}`).then((response) => response.json())).toMatchObject({ engine: 'alpha' })
    const other = await post(`/session/${session.id}/message`, {
      parts: [{ type: 'text', text: 'hello' }],
      model: { providerID: 'agent-runtime', modelID: 'beta' },
    })
    expect(await other.json()).toMatchObject({ name: 'BadRequest', data: { message: expect.stringContaining('runs engine "alpha"') } })
  })
})
