import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

/**
 * Steering through the service with the fake CLI (test/fakes/fake-claude.ts
 * asks about every Bash call as the real CLI does with
 * --permission-prompt-tool stdio): what the real-CLI suite does not reach —
 * a stop while a request waits, and engine.timeout paused while it waits.
 */
type Msg = Record<string, unknown>
const isEnd = (msg: Msg) => msg.event === 'completed' || msg.event === 'stopped' || (msg.event === 'error' && msg.tool === undefined)

describe('steering - the session and its CLI', () => {
  let stack: Stack
  let client: WsClient

  beforeAll(async () => {
    // engine.timeout 1 s: a turn that waits longer for a person must still complete.
    stack = await startStack({ engine: { approval: 'ask', approval_timeout: '30s', timeout: '1s' } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client?.close()
    await stack?.close()
  })

  const canary = (sessionId: string) => path.join(stack.config.session.work_dir, sessionId, 'canary')

  it('steering - a stop while the request waits withdraws it (turn_ended), the tool never runs, the turn is stopped', async () => {
    client.send({ type: 'execute', request_id: 's', session_id: 'stop-wait', prompt: 'tool: touch canary' })
    const request = (await client.event('permission_request', 'stop-wait')).permission as { id: string }
    client.send({ type: 'stop', session_id: 'stop-wait' })
    expect(await client.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === request.id)).toMatchObject({
      decision: 'deny',
      source: 'turn_ended',
    })
    expect(await client.next((msg) => msg.session_id === 'stop-wait' && isEnd(msg))).toMatchObject({ event: 'stopped' })
    expect(existsSync(canary('stop-wait'))).toBe(false)
    client.send({ type: 'permission_reply', request_id: 'late', session_id: 'stop-wait', permission_id: request.id, decision: 'allow_once' })
    expect(await client.next((msg) => msg.request_id === 'late' && msg.event === 'error')).toMatchObject({ error: { code: 'ALREADY_ANSWERED' } })
  })

  it('steering - engine.timeout does not run while the turn waits for a person', async () => {
    client.send({ type: 'execute', request_id: 't', session_id: 'slow-person', prompt: 'tool: touch canary' })
    const request = (await client.event('permission_request', 'slow-person')).permission as { id: string }
    // Longer than engine.timeout (1 s) before anyone answers: the turn is not timed out meanwhile.
    const timedOut = client
      .next((msg) => msg.session_id === 'slow-person' && msg.event === 'error', 2_500)
      .then(
        (msg) => msg,
        () => undefined,
      )
    expect(await timedOut).toBeUndefined()
    client.send({ type: 'permission_reply', session_id: 'slow-person', permission_id: request.id, decision: 'allow_once' })
    expect(await client.next((msg) => msg.session_id === 'slow-person' && isEnd(msg))).toMatchObject({ event: 'completed' })
    expect(existsSync(canary('slow-person'))).toBe(true)
  })

  it('steering - GET pending lists what waits; POST reply answers it; both refuse what does not fit', async () => {
    client.send({ type: 'execute', request_id: 'h', session_id: 'http-reply', prompt: 'tool: touch canary' })
    const request = (await client.event('permission_request', 'http-reply')).permission as { id: string }
    const pending = await (await fetch(`${stack.url}/v1/sessions/http-reply/pending`)).json()
    expect(pending).toMatchObject({ permissions: [{ id: request.id, tool: { name: 'Bash', input: { command: 'touch canary' } } }], questions: [] })
    const post = (body: unknown) =>
      fetch(`${stack.url}/v1/sessions/http-reply/reply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const bad = await post({ permission_id: request.id, decision: 'perhaps' })
    expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([400, 'BAD_REQUEST'])
    const unknown = await post({ permission_id: 'per_nothing', decision: 'deny' })
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([404, 'PERMISSION_NOT_FOUND'])
    const ok = await post({ permission_id: request.id, decision: 'deny', message: 'no' })
    expect([ok.status, await ok.json()]).toEqual([200, { resolved: true }])
    expect(await client.next((msg) => msg.session_id === 'http-reply' && isEnd(msg))).toMatchObject({ event: 'completed' })
    expect(existsSync(canary('http-reply'))).toBe(false)
    expect(await (await fetch(`${stack.url}/v1/sessions/http-reply/pending`)).json()).toEqual({ permissions: [], questions: [] })
  })
})
