import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { CALLBACK_PATH } from '../../gateway/chat/mod.ts'
import { startFakeChatApi, type FakeChatApi } from '../fakes/chat-api.ts'
import { signedQuery, textCallback } from '../fixtures/chat.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

/**
 * No secret in a log line or an error body: the real service process
 * (`agent-runtime dev`, debug logs) with every kind of secret configured,
 * driven through each surface, with failures on purpose; then every line it
 * printed and every error body it sent is searched for each secret.
 */
const SECRETS = {
  apiKey: 'sk-svc-primary-7f3a9c1e5b',
  rotatedKey1: 'sk-svc-rotated-one-2d8e4a',
  rotatedKey2: 'sk-svc-rotated-two-9b1c6f',
  chatAppSecret: 'chat-app-secret-5e7d2b9a',
  chatCallbackToken: 'chat-callback-token-c4f81a',
  chatCallbackKey: 'chat-callback-key-0a9b8c7d',
  anthropicKey: 'sk-ant-api03-secretsecret-3e9f',
  engineToken: 'engine-auth-token-b7e2d4c1',
}
const ALL = Object.values(SECRETS)

describe('secrets', () => {
  let dir: string
  let chatApi: FakeChatApi
  let service: ServiceProcess
  const errorBodies: string[] = []
  let trafficDone = false

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-secrets-'))
    chatApi = await startFakeChatApi({ appSecret: SECRETS.chatAppSecret })
    const config = {
      // Bounded, in case a turn were still running at the end.
      server: { port: 0, shutdown_grace: '2s' },
      log: { level: 'debug' },
      engine: {
        command: FAKE_CLAUDE.command,
        args: FAKE_CLAUDE.args,
        env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude'), ANTHROPIC_AUTH_TOKEN: SECRETS.engineToken },
      },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      chat: { enabled: true, api_url: chatApi.url, app_key: chatApi.appKey, callback_key: SECRETS.chatCallbackKey, retry_delay: '1ms' },
    }
    service = await startServiceProcess('dev', config, dir, {
      SERVICE_API_KEY: SECRETS.apiKey,
      SERVICE_API_KEYS: `${SECRETS.rotatedKey1},${SECRETS.rotatedKey2}`,
      SERVICE_CHAT_APP_TOKEN: SECRETS.chatAppSecret,
      SERVICE_CHAT_BOT_TOKEN: SECRETS.chatCallbackToken,
      ANTHROPIC_API_KEY: SECRETS.anthropicKey,
    })
  })
  afterAll(async () => {
    await service?.stop('SIGKILL')
    await chatApi?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  /** An HTTP request; the body of any error answer is kept for the search. */
  const http = async (pathname: string, init: RequestInit = {}) => {
    const response = await fetch(service.address! + pathname, init)
    const body = await response.text()
    if (response.status >= 400) errorBodies.push(body)
    return { status: response.status, body }
  }

  /** A WebSocket handshake the server refuses: its status and body. */
  const refusedHandshake = (url: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = new WebSocket(url, { headers })
      socket.once('open', () => reject(new Error('the handshake was accepted')))
      socket.once('unexpected-response', (_req, res) => {
        let body = ''
        res.on('data', (chunk: Buffer) => (body += chunk.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
    })

  it('traffic - every surface, with secrets in headers, queries and environments, and failures on purpose', async () => {
    const wsUrl = service.address!.replace('http', 'ws') + '/ws/v1/agent'
    const auth = { authorization: `Bearer ${SECRETS.rotatedKey2}` }

    // WebSocket: key in a header, key in the query, wrong keys refused at the handshake.
    const byHeader = await WsClient.connect(wsUrl, { 'x-api-key': SECRETS.apiKey })
    byHeader.send({ type: 'execute', session_id: 'sec-1', prompt: 'tool: echo hello', request_id: 1 })
    await byHeader.event('completed', 'sec-1')
    // The agent's own environment holds the engine's keys; the agent may print them to its client, never to the log.
    byHeader.send({ type: 'execute', session_id: 'sec-1', prompt: 'tool: env', request_id: 2 })
    await byHeader.next((msg) => msg.request_id === 2 && (msg.event === 'completed' || msg.event === 'error'))
    byHeader.send({ type: 'execute', session_id: 'sec-2', prompt: 'crash', request_id: 3 })
    byHeader.send({ type: 'execute', session_id: 'sec-3', prompt: 'fail', request_id: 4 })
    byHeader.send({ type: 'execute', session_id: 'sec-4', prompt: 'Run `rm -rf /` now', request_id: 5 })
    byHeader.send({ type: 'stats', session_id: 'never-seen', request_id: 6 })
    byHeader.send('{not json')
    for (const id of [3, 4, 5, 6]) await byHeader.next((msg) => msg.request_id === id && msg.event === 'error')
    await byHeader.next((msg) => msg.event === 'error' && (msg.error as { code: string }).code === 'BAD_JSON')
    errorBodies.push(...byHeader.messages.filter((msg) => msg.event === 'error').map((msg) => JSON.stringify(msg)))
    await byHeader.close()

    const byQuery = await WsClient.connect(`${wsUrl}?api_key=${SECRETS.rotatedKey1}`)
    byQuery.send({ type: 'version', request_id: 'v' })
    await byQuery.next((msg) => msg.request_id === 'v')
    await byQuery.close()

    for (const refused of [
      await refusedHandshake(`${wsUrl}?api_key=${SECRETS.apiKey}x`),
      await refusedHandshake(wsUrl, { 'x-api-key': `${SECRETS.rotatedKey1}-old` }),
    ]) {
      expect(refused.status).toBe(401)
      errorBodies.push(refused.body)
    }

    // REST: keys as Bearer and X-API-Key; wrong keys; errors of every kind.
    expect((await http('/session', { headers: auth })).status).toBe(200)
    expect((await http('/session', { headers: { authorization: `Bearer ${SECRETS.apiKey.slice(0, -1)}` } })).status).toBe(401)
    expect((await http('/session', { headers: { 'x-api-key': SECRETS.chatAppSecret } })).status).toBe(401)
    // A key in a REST query is a carrier (as HotPlex documents); right or wrong, no log line may hold it.
    expect((await http(`/session?api_key=${SECRETS.rotatedKey2}`)).status).toBe(200)
    expect((await http(`/session?api_key=${SECRETS.rotatedKey2}-old`)).status).toBe(401)
    expect((await http('/session/no-such-session', { headers: auth })).status).toBe(404)
    expect((await http('/session', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{bad json' })).status).toBe(400)
    expect(
      (await http('/v1/agent/chat', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 7 }) })).status,
    ).toBe(400)
    expect((await http('/metrics', { headers: auth })).status).toBe(200)
    expect((await http('/metrics')).status).toBe(401)

    // Chat: a signed callback is answered through the robot API (which takes the app secret); a bad signature is refused.
    const signed = await http(`${CALLBACK_PATH}?${signedQuery(SECRETS.chatCallbackToken, Date.now())}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(textCallback('hello from chat')),
    })
    expect(signed.status).toBe(200)
    await chatApi.waitForSent(1)
    const forged = await http(`${CALLBACK_PATH}?${signedQuery(SECRETS.chatAppSecret, Date.now())}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(textCallback('forged')),
    })
    expect(forged.status).toBe(401)

    expect(await service.stop('SIGTERM')).toBe(0)
    trafficDone = true
  })

  it('logs - no line holds a secret (nor an access token the chat platform issued), yet the failures were logged', () => {
    expect(trafficDone, 'the traffic test ran to its end').toBe(true)
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '')
    const leaks = lines.filter((line) => [...ALL, ...chatApi.issued].some((secret) => line.includes(secret)))
    expect(leaks).toEqual([])
    // Every line is a JSON log record with the §6.3 fields.
    const records = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(records.length).toBe(lines.filter((line) => line.startsWith('{')).length)
    for (const record of records) expect(record).toMatchObject({ level: expect.any(String), msg: expect.any(String), namespace: 'default' })
    const messages = (level: string) => records.filter((record) => record.level === level).map((record) => record.msg)
    // The traffic above did reach the log: execution failures at error, client and recoverable failures at warn.
    expect(messages('error')).toContain('turn failed')
    expect(messages('warn')).toEqual(
      expect.arrayContaining(['request refused: API key missing or invalid', 'chat callback rejected', 'WAF blocked an operation']),
    )
    expect(records.find((record) => record.msg === 'turn failed' && record.level === 'error')).toMatchObject({
      session_id: expect.stringMatching(/^sec-/),
      code: expect.stringMatching(/^ENGINE_/),
    })
    expect(records.some((record) => record.msg === 'agent CLI started' && record.session_id === 'sec-1')).toBe(true)
  })

  it('errors - no error body holds a secret', () => {
    expect(trafficDone, 'the traffic test ran to its end').toBe(true)
    expect(errorBodies.length).toBeGreaterThan(10)
    expect(errorBodies.filter((body) => ALL.some((secret) => body.includes(secret)))).toEqual([])
  })

  it('start-up failure - the password of the NATS URL stays out of the failure log', async () => {
    const password = 'nats-pass-4b9e1d7c2a'
    const failing = await startServiceProcess('gateway', { server: { port: 0 }, nats: { url: `nats://agent:${password}@127.0.0.1:1` } }, dir).then(
      () => {
        throw new Error('the gateway started without NATS')
      },
      (err: Error) => err.message,
    )
    expect(failing).toContain('agent runtime failed to start')
    expect(failing).toContain('[REDACTED]')
    expect(failing).not.toContain(password)
  })
})
