/**
 * Where session ownership lives: shared by gateways over NATS (JetStream
 * bucket), kept across a dev-mode restart (a file beside the markers, as the
 * conversation is), and the chat adapter's sessions belong to `chat.tenant`.
 */
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../../service/logger.ts'
import { startService, type Service } from '../../../service/start.ts'
import { durableFileName } from '../../../state/mod.ts'
import { CALLBACK_PATH } from '../../../gateway/chat/mod.ts'
import { signedQuery, textCallback } from '../../fixtures/chat.ts'
import { startNats } from '../../fixtures/nats-server.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'
import { startFakeChatApi } from '../../fakes/chat-api.ts'
import { TENANT_KEYS, TENANTS } from '../../fixtures/tenants.ts'

const ACME = { 'x-api-key': TENANT_KEYS.acme }
const GLOBEX = { 'x-api-key': TENANT_KEYS.globex }

/** The code of the answer to one WebSocket request: `ok` when `done` came, else the error's code. */
async function ask(wsUrl: string, headers: Record<string, string>, frame: Record<string, unknown>, done: string): Promise<string> {
  const client = await WsClient.connect(wsUrl, headers)
  try {
    client.send({ ...frame, request_id: 'r' })
    const answer = await client.next((msg) => msg.request_id === 'r' && (msg.event === done || msg.event === 'error'))
    return answer.event === 'error' ? (answer.error as { code: string }).code : 'ok'
  } finally {
    await client.close()
  }
}

describe('tenancy - where ownership is kept', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('tenancy - production mode: two gateways over NATS share the claims; another tenant is refused on the other gateway', async () => {
    const nats = await startNats()
    cleanups.push(() => nats.stop())
    const shared = { ...TENANTS, nats: { url: nats.url, prefix: `tenancy-${process.pid}-${Date.now().toString(36)}` } }
    const runner = await startStack(shared, 'runner')
    cleanups.push(() => runner.close())
    const one = await startStack(shared, 'gateway')
    cleanups.push(() => one.close())
    const two = await startStack(shared, 'gateway')
    cleanups.push(() => two.close())
    const id = `prod-${randomUUID()}`
    expect(await ask(one.wsUrl, ACME, { type: 'execute', session_id: id, prompt: 'hi' }, 'completed')).toBe('ok')
    // The other gateway has never seen the session: it reads the claim from the bucket.
    expect(await ask(two.wsUrl, GLOBEX, { type: 'execute', session_id: id, prompt: 'steal' }, 'completed')).toBe('SESSION_NOT_FOUND')
    expect(await ask(two.wsUrl, GLOBEX, { type: 'attach', session_id: id, last_seq: 0 }, 'completed')).toBe('SESSION_NOT_FOUND')
    expect(await ask(two.wsUrl, ACME, { type: 'attach', session_id: id, last_seq: 0 }, 'completed')).toBe('ok')
    const foreign = await fetch(`${two.url}/v1/sessions/${id}/events`, { headers: { ...GLOBEX, 'last-event-id': '0' } })
    expect(foreign.status).toBe(404)
    // A REST session made on gateway two is not in the other tenant's list on gateway one.
    const rest = `prod-rest-${randomUUID()}`
    expect(
      (
        await fetch(`${two.url}/session`, {
          method: 'POST',
          headers: { ...ACME, 'content-type': 'application/json' },
          body: JSON.stringify({ session_id: rest }),
        })
      ).status,
    ).toBe(200)
    const listed = (await (await fetch(`${one.url}/session`, { headers: GLOBEX })).json()) as { id: string }[]
    expect(listed.map((info) => info.id)).not.toContain(rest)
    expect((await fetch(`${one.url}/session/${rest}`, { headers: GLOBEX })).status).toBe(404)
    expect((await fetch(`${one.url}/session/${rest}`, { headers: ACME })).status).toBe(200)
  })

  it("tenancy - dev mode: after a restart the conversation is still its owner's, never another tenant's", async () => {
    const stack: Stack = await startStack(TENANTS)
    cleanups.push(() => stack.close())
    const id = `dev-${randomUUID()}`
    expect(await ask(stack.wsUrl, ACME, { type: 'execute', session_id: id, prompt: 'remember me' }, 'completed')).toBe('ok')
    await stack.service.stop()
    const again: Service = await startService('dev', stack.config, createLogger(stack.config.log.level, stack.config.namespace))
    cleanups.push(() => again.stop())
    const wsUrl = (again.address ?? '').replace('localhost', '127.0.0.1').replace(/^http/, 'ws') + '/ws/v1/agent'
    expect(await ask(wsUrl, GLOBEX, { type: 'execute', session_id: id, prompt: 'recall' }, 'completed')).toBe('SESSION_NOT_FOUND')
    const client = await WsClient.connect(wsUrl, ACME)
    client.send({ type: 'execute', session_id: id, prompt: 'recall', request_id: 'r' })
    const completed = await client.next((msg) => msg.request_id === 'r' && (msg.event === 'completed' || msg.event === 'error'))
    await client.close()
    expect(completed).toMatchObject({ event: 'completed', data: 'Earlier prompts: remember me' })
  })

  it("tenancy - the chat adapter's sessions belong to chat.tenant", async () => {
    const api = await startFakeChatApi()
    cleanups.push(() => api.stop())
    const token = 'tenancy-callback-token'
    const stack = await startStack({
      ...TENANTS,
      chat: { enabled: true, api_url: api.url, app_key: api.appKey, app_token: api.appSecret, bot_token: token, retry_delay: '1ms', tenant: 'globex' },
    })
    cleanups.push(() => stack.close())
    const sent = await fetch(`${stack.url}${CALLBACK_PATH}?${signedQuery(token, Date.now())}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(textCallback('hello', { senderId: 'alice', conversationId: 'conv-1' })),
    })
    expect(sent.status).toBe(200)
    await api.waitForSent(1)
    // The session id the adapter made is in the claims file, with its tenant.
    const claims = (await readFile(path.join(stack.config.session.marker_dir, durableFileName('tenants')), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const chat = claims.find((claim) => claim.id.startsWith('chat-'))
    expect(chat).toMatchObject({ doc: { tenant: 'globex' } })
    expect(await ask(stack.wsUrl, GLOBEX, { type: 'stats', session_id: chat.id }, 'stats')).toBe('ok')
    expect(await ask(stack.wsUrl, ACME, { type: 'stats', session_id: chat.id }, 'stats')).toBe('SESSION_NOT_FOUND')
  })
})
