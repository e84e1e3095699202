import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CALLBACK_PATH } from '../../gateway/chat/mod.ts'
import { signedQuery, textCallback } from '../fixtures/chat.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { until } from '../fixtures/until.ts'
import { startFakeChatApi, type FakeChatApi } from '../fakes/chat-api.ts'
import { claudeRow } from './engines/claude.ts'
import type { EngineFixture } from './engines/row.ts'

/**
 * Steering through the chat platform: the real Claude Code CLI (approval:
 * ask) against the fake Anthropic API asks, the conversation gets a numbered
 * message on the fake chat platform, and the person's next text answers it.
 */
const TOKEN = 'chat-steering-callback-token'
const TURN_MS = 90_000

let fixture: EngineFixture
let api: FakeChatApi
let stack: Stack

beforeAll(async () => {
  fixture = await claudeRow.setup()
  api = await startFakeChatApi()
  stack = await startStack({
    engine: { default: 'claude', approval: 'ask', approval_timeout: '6s', stop_grace: '2s' },
    engines: [fixture.config],
    chat: { enabled: true, api_url: api.url, app_key: api.appKey, app_token: api.appSecret, bot_token: TOKEN, retry_delay: '1ms' },
  })
}, 120_000)
afterAll(async () => {
  await stack?.close()
  await api?.stop()
  await fixture?.stop()
})

/** One person in one conversation: what they send, what the robot sent them. */
function person(senderId: string) {
  const received = () => api.sent.filter((m) => m.body.userIds[0] === senderId).map((m) => m.body.text.content as string)
  return {
    async say(content: string): Promise<void> {
      const res = await fetch(`${stack.url}${CALLBACK_PATH}?${signedQuery(TOKEN, Date.now())}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(textCallback(content, { senderId, conversationId: 'steering-group' })),
      })
      expect(await res.json()).toEqual({ ok: true, processed: true })
    },
    received,
    /** Waits for the robot's `count`-th message to this person and returns it. */
    async message(count: number): Promise<string> {
      await until(
        () => received().length >= count,
        () => `message ${count} to ${senderId}; got ${JSON.stringify(received())}`,
        TURN_MS,
      )
      return received()[count - 1]!
    },
  }
}

const sessionDirs = () => new Set(existsSync(stack.config.session.work_dir) ? readdirSync(stack.config.session.work_dir) : [])
/** The work dir of the one session created while `start` ran. */
async function newSession(start: () => Promise<void>): Promise<string> {
  const before = sessionDirs()
  await start()
  const created = [...sessionDirs()].filter((dir) => !before.has(dir))
  expect(created).toHaveLength(1)
  return path.join(stack.config.session.work_dir, created[0]!)
}

describe('chat steering with Claude Code', () => {
  it('chat steering e2e - the request arrives numbered; "1" lets the tool run', async () => {
    const ada = person('ada')
    const dir = await newSession(async () => {
      await ada.say('run: touch canary')
      expect(await ada.message(1)).toBe('The agent wants to run Bash: touch canary. Reply 1 to allow once, 2 to allow for this session, 3 to deny.')
    })
    await ada.say('1')
    expect(await ada.message(2)).toContain('Bash completed')
    expect(existsSync(path.join(dir, 'canary'))).toBe(true)
    expect(ada.received()).toHaveLength(2)
  })

  it('chat steering e2e - free text while the request waits gets the hint and is no prompt; "3" keeps the tool from running', async () => {
    const bo = person('bo')
    const dir = await newSession(async () => {
      await bo.say('run: touch canary-denied')
      expect(await bo.message(1)).toMatch(/^The agent wants to run Bash: touch canary-denied\./)
    })
    await bo.say('is this safe, tell me more')
    expect(await bo.message(2)).toBe(
      'The agent is waiting for your answer about Bash: touch canary-denied. Reply 1 to allow once, 2 to allow for this session, 3 to deny.',
    )
    await bo.say('3')
    expect(await bo.message(3)).toContain('The user denied this tool call')
    expect(existsSync(path.join(dir, 'canary-denied'))).toBe(false)
    expect(fixture.modelSaw('is this safe, tell me more')).toBe(false)
    expect(bo.received()).toHaveLength(3)
  })

  it('chat steering e2e - a question answered by its label reaches the model', async () => {
    const cy = person('cy')
    await cy.say('ask: Which colour? | Red | Blue')
    expect(await cy.message(1)).toMatch(/^The agent asks: Which colour\?\n1\. Red.*\n2\. Blue.*\nReply with an option's number or name, or reject to skip\.$/)
    await cy.say('blue')
    await cy.message(2)
    // The tool result the CLI sends the model reads `"Which colour?"="Blue"` (JSON-escaped in the request body).
    expect(fixture.modelSaw('=\\"Blue\\"')).toBe(true)
  })

  it('chat steering e2e - a request answered from another client is told in the conversation and no longer waits', async () => {
    const di = person('di')
    const dir = await newSession(async () => {
      await di.say('run: touch canary-elsewhere')
      await di.message(1)
    })
    const sessionId = path.basename(dir)
    const pending = (await (await fetch(`${stack.url}/v1/sessions/${sessionId}/pending`)).json()) as { permissions: { id: string }[] }
    expect(pending.permissions).toHaveLength(1)
    const reply = await fetch(`${stack.url}/v1/sessions/${sessionId}/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ permission_id: pending.permissions[0]!.id, decision: 'allow_once' }),
    })
    expect(reply.status).toBe(200)
    expect(await di.message(2)).toBe('Allowed from another client.')
    await di.message(3)
    expect(existsSync(path.join(dir, 'canary-elsewhere'))).toBe(true)
  })

  it('chat steering e2e - nobody answers: the conversation is told it was denied in time', async () => {
    const ed = person('ed')
    const dir = await newSession(async () => {
      await ed.say('run: touch canary-late')
      await ed.message(1)
    })
    expect(await ed.message(2)).toBe('No answer in time: denied.')
    await ed.message(3)
    expect(existsSync(path.join(dir, 'canary-late'))).toBe(false)
  })
})
