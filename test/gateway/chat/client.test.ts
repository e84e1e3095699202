import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RobotClient } from '../../../gateway/chat/client.ts'
import { ChatError } from '../../../gateway/chat/errors.ts'
import { sendBody } from '../../../gateway/chat/wire.ts'
import { captureLog } from '../../fixtures/chat.ts'
import { startFakeChatApi, type FakeChatApi } from '../../fakes/chat-api.ts'

let api: FakeChatApi
beforeEach(async () => {
  api = await startFakeChatApi()
})
afterEach(async () => {
  await api.stop()
})

/** A client on the fake whose waits are recorded instead of slept. */
function client(overrides: { attempts?: number; appSecret?: string } = {}) {
  const sleeps: number[] = []
  const robot = new RobotClient({
    apiUrl: api.url + '/',
    appKey: api.appKey,
    appSecret: overrides.appSecret ?? api.appSecret,
    attempts: overrides.attempts ?? 4,
    retryDelayMs: 100,
    requestTimeoutMs: 5000,
    log: captureLog().log,
    sleep: async (ms) => void sleeps.push(ms),
  })
  return { robot, sleeps }
}

const hello = sendBody('text', 'hello', 'user-1', 'Agent reply')

async function sendError(promise: Promise<unknown>): Promise<ChatError> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(ChatError)
    return err as ChatError
  }
  throw new Error('expected the send to fail')
}

describe('chat robot client', () => {
  it('client - fetches a token with POST JSON {appKey, appSecret} and sends with it in x-acs-chat-access-token', async () => {
    const { robot } = client()
    await robot.send('robot-1', hello)
    expect(api.tokenCalls).toHaveLength(1)
    const tokenCall = api.tokenCalls[0]!
    expect(tokenCall.method).toBe('POST')
    expect(tokenCall.headers['content-type']).toBe('application/json')
    expect(tokenCall.body).toEqual({ appKey: api.appKey, appSecret: api.appSecret })
    const send = api.sendCalls[0]!
    expect(send.method).toBe('POST')
    expect(send.path).toBe('/v1.0/robot/oToMessages/batchSend')
    expect(send.query.get('robotCode')).toBe('robot-1')
    expect(send.headers['content-type']).toBe('application/json')
    expect(send.headers['x-acs-chat-access-token']).toBe('fake-token-1')
    expect(api.sent).toEqual([{ robotCode: 'robot-1', token: 'fake-token-1', body: { msgtype: 'text', text: { content: 'hello' }, userIds: ['user-1'] } }])
  })

  it('client - markdown bodies go out as §4.4 shapes them', async () => {
    const { robot } = client()
    await robot.send('robot-1', sendBody('markdown', '**bold**', 'user-9', 'Title'))
    expect(api.sent[0]!.body).toEqual({ msgtype: 'markdown', markdown: { title: 'Title', text: '**bold**' }, userIds: ['user-9'] })
  })

  it('client - the token is cached across sends', async () => {
    const { robot } = client()
    for (let i = 0; i < 5; i++) await robot.send('robot-1', hello)
    expect(api.tokenCalls).toHaveLength(1)
    expect(api.sent.map((m) => m.token)).toEqual(Array(5).fill('fake-token-1'))
  })

  it('client - concurrent senders share one token request', async () => {
    const { robot } = client()
    await Promise.all(Array.from({ length: 10 }, (_, i) => robot.send('robot-1', sendBody('text', `m${i}`, 'user-1', 't'))))
    expect(api.tokenCalls).toHaveLength(1)
    expect(api.sent).toHaveLength(10)
  })

  it('client - a 401 forces one refresh and one retry', async () => {
    const { robot, sleeps } = client()
    await robot.send('robot-1', hello)
    api.expireTokens()
    await robot.send('robot-1', hello)
    expect(api.tokenCalls).toHaveLength(2)
    expect(api.sendCalls.map((c) => c.status)).toEqual([200, 401, 200])
    expect(api.sent.map((m) => m.token)).toEqual(['fake-token-1', 'fake-token-2'])
    expect(sleeps).toEqual([])
  })

  it('client - concurrent 401s share the refresh', async () => {
    const { robot } = client()
    await robot.send('robot-1', hello)
    api.expireTokens()
    await Promise.all(Array.from({ length: 5 }, () => robot.send('robot-1', hello)))
    expect(api.tokenCalls).toHaveLength(2)
    expect(api.sent).toHaveLength(6)
  })

  it('client - a second 401 in a row fails without looping', async () => {
    const { robot } = client()
    api.failSends(401, 2)
    const error = await sendError(robot.send('robot-1', hello))
    expect(error.code).toBe('CHAT_SEND_FAILED')
    expect(error.status).toBe(401)
    expect(api.sendCalls).toHaveLength(2)
    expect(api.tokenCalls).toHaveLength(2)
  })

  it.each([429, 500, 502, 503])('client - %i is retried with backoff, then the message goes out', async (status) => {
    const { robot, sleeps } = client()
    api.failSends(status, 2)
    await robot.send('robot-1', hello)
    expect(api.sendCalls.map((c) => c.status)).toEqual([status, status, 200])
    expect(sleeps).toEqual([100, 200])
    expect(api.sent).toHaveLength(1)
  })

  it('client - Retry-After longer than the backoff is honoured', async () => {
    const { robot, sleeps } = client()
    api.failSends(429, 1, '2')
    await robot.send('robot-1', hello)
    expect(sleeps).toEqual([2000])
  })

  it('client - retries are bounded: after the last try a CHAT_SEND_FAILED with the status', async () => {
    const { robot, sleeps } = client({ attempts: 3 })
    api.failSends(503, 10)
    const error = await sendError(robot.send('robot-1', hello))
    expect(error).toMatchObject({ code: 'CHAT_SEND_FAILED', status: 503, retryable: true })
    expect(api.sendCalls).toHaveLength(3)
    expect(sleeps).toEqual([100, 200])
  })

  it('client - other 4xx fail at once', async () => {
    const { robot, sleeps } = client()
    api.failSends(403)
    const error = await sendError(robot.send('robot-1', hello))
    expect(error).toMatchObject({ code: 'CHAT_SEND_FAILED', status: 403, retryable: false })
    expect(api.sendCalls).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('client - a wrong app secret is a CHAT_TOKEN_FAILED and no send', async () => {
    const { robot } = client({ appSecret: 'wrong' })
    const error = await sendError(robot.send('robot-1', hello))
    expect(error).toMatchObject({ code: 'CHAT_TOKEN_FAILED', status: 400, retryable: false })
    expect(api.sendCalls).toHaveLength(0)
  })

  it('client - a token endpoint 5xx is retried like a send failure', async () => {
    const { robot, sleeps } = client()
    api.failTokens(500)
    await robot.send('robot-1', hello)
    expect(api.tokenCalls.map((c) => c.status)).toEqual([500, 200])
    expect(sleeps).toEqual([100])
    expect(api.sent).toHaveLength(1)
  })

  it('client - an unreachable API is retried, then fails with the cause kept', async () => {
    const { robot } = client({ attempts: 2 })
    await api.stop()
    const error = await sendError(robot.send('robot-1', hello))
    expect(error.code).toBe('CHAT_TOKEN_FAILED')
    expect(error.retryable).toBe(true)
    expect(error.cause).toBeDefined()
    api = await startFakeChatApi()
  })

  it('client - an empty robot code makes no request', async () => {
    const { robot } = client()
    const error = await sendError(robot.send('', hello))
    expect(error.code).toBe('CHAT_ROBOT_CODE_MISSING')
    expect(api.tokenCalls).toHaveLength(0)
    expect(api.sendCalls).toHaveLength(0)
  })
})
