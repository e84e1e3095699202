/**
 * Steering over the OpenCode layer with real programs: the OpenCode SDK
 * (@opencode-ai/sdk 1.19.3, the v2 client and the legacy one) answers the
 * permission requests and questions of the real Claude Code CLI (fake
 * Anthropic API, `approval: ask`) running behind the service.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { createOpencodeClient as createLegacyClient, type OpencodeClient as LegacyClient } from '@opencode-ai/sdk'
import { createOpencodeClient, type Event, type OpencodeClient, type ToolPart } from '@opencode-ai/sdk/v2/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { StreamCollector } from '../gateway/opencode/sdk-events.ts'
import { claudeRow } from './engines/claude.ts'
import type { EngineFixture } from './engines/row.ts'

const TURN_MS = 60_000

type Of<T extends Event['type']> = Extract<Event, { type: T }>
const is =
  <T extends Event['type']>(type: T, sessionID: string) =>
  (event: Event): event is Of<T> =>
    event.type === type && (event.properties as { sessionID?: string }).sessionID === sessionID

let fixture: EngineFixture
let stack: Stack
let client: OpencodeClient
let legacy: LegacyClient
let events: StreamCollector<Event>
const controller = new AbortController()

beforeAll(async () => {
  fixture = await claudeRow.setup()
  stack = await startStack({ engine: { default: 'claude', approval: 'ask', approval_timeout: '60s' }, engines: [fixture.config] })
  client = createOpencodeClient({ baseUrl: stack.url })
  legacy = createLegacyClient({ baseUrl: stack.url })
  // The SDK opens the stream only when it is read: wait for its first event before prompting.
  const { stream } = await client.event.subscribe(undefined, { signal: controller.signal, sseMaxRetryAttempts: 1 })
  events = new StreamCollector<Event>(stream)
  await events.next((event) => event.type === 'server.connected')
}, 120_000)
afterAll(async () => {
  controller.abort()
  await stack?.close()
  await fixture?.stop()
})

const canary = (directory: string) => path.join(directory, 'canary')

/** The first event of this type about the session (seen or still to come). */
const next = <T extends Event['type']>(type: T, sessionID: string, timeoutMs?: number) => events.next(is(type, sessionID), timeoutMs) as Promise<Of<T>>

/** A new session whose turn runs `touch canary` and waits for a person: its id, directory and the request. */
async function asking(title: string) {
  const session = (await client.session.create({ title })).data!
  const accepted = await client.session.promptAsync({ sessionID: session.id, parts: [{ type: 'text', text: 'run: touch canary' }] })
  expect(accepted.response.status).toBe(202)
  return { session, permission: (await next('permission.asked', session.id, TURN_MS)).properties }
}

describe('opencode steering - the OpenCode SDK answers the real Claude Code CLI’s requests', () => {
  it('v2 client - permission.asked names the tool part of the call; permission.list and the /api lists show it; reply once runs the tool; a second answer is 404 with ALREADY_ANSWERED', async () => {
    const { session, permission } = await asking('allow once')
    expect(permission).toMatchObject({
      id: expect.stringMatching(/^per_/),
      sessionID: session.id,
      permission: 'bash',
      patterns: ['touch canary'],
      metadata: { command: 'touch canary' },
    })
    expect(permission.always).toEqual([expect.stringMatching(/^touch canary/)])
    // The request points at the running tool part of the same call.
    const part = events.events
      .flatMap((e) => (is('message.part.updated', session.id)(e) && e.properties.part.type === 'tool' ? [e.properties.part as ToolPart] : []))
      .at(-1)
    expect(part).toMatchObject({ tool: 'Bash', state: { status: 'running' } })
    expect(permission.tool).toEqual({ messageID: part!.messageID, callID: part!.callID })

    expect((await client.permission.list()).data).toContainEqual(permission)
    expect((await client.v2.permission.request.list()).data?.data).toContainEqual(
      expect.objectContaining({ id: permission.id, action: 'bash', resources: ['touch canary'] }),
    )
    expect((await client.v2.session.permission.list({ sessionID: session.id })).data?.data.map((p) => p.id)).toEqual([permission.id])
    expect((await client.v2.session.permission.get({ sessionID: session.id, requestID: permission.id })).data?.data).toMatchObject({
      id: permission.id,
      source: { type: 'tool', callID: part!.callID },
    })

    const answered = await client.permission.reply({ requestID: permission.id, reply: 'once' })
    expect(answered.data).toBe(true)
    expect((await next('permission.replied', session.id)).properties).toEqual({ sessionID: session.id, requestID: permission.id, reply: 'once' })
    await next('session.idle', session.id, TURN_MS)
    expect(existsSync(canary(session.directory))).toBe(true)
    expect((await client.permission.list()).data?.map((p) => p.id)).not.toContain(permission.id)

    const again = await client.permission.reply({ requestID: permission.id, reply: 'reject' })
    expect(again.response.status).toBe(404)
    expect(again.error).toMatchObject({ _tag: 'PermissionNotFoundError', requestID: permission.id, code: 'ALREADY_ANSWERED' })
  })

  it('v2 client - v2.session.permission.reply reject with a message: 204, the tool never runs, the model reads the message', async () => {
    const { session, permission } = await asking('deny')
    const answered = await client.v2.session.permission.reply({ sessionID: session.id, requestID: permission.id, reply: 'reject', message: 'not that file' })
    expect(answered.response.status).toBe(204)
    expect((await next('permission.replied', session.id)).properties.reply).toBe('reject')
    await next('session.idle', session.id, TURN_MS)
    expect(existsSync(canary(session.directory))).toBe(false)
    expect(fixture.modelSaw('not that file')).toBe(true)
  })

  it('legacy client - postSessionIdPermissionsPermissionId {response: always}: true; the same call is not asked again in the session', async () => {
    const { session, permission } = await asking('allow always')
    const answered = await legacy.postSessionIdPermissionsPermissionId({ path: { id: session.id, permissionID: permission.id }, body: { response: 'always' } })
    expect(answered.data).toBe(true)
    expect((await next('permission.replied', session.id)).properties.reply).toBe('always')
    await next('session.idle', session.id, TURN_MS)
    const before = events.events.length
    await client.session.prompt({ sessionID: session.id, parts: [{ type: 'text', text: 'run: touch canary' }] })
    expect(events.events.slice(before).filter(is('permission.asked', session.id))).toEqual([])
  })

  it('v2 client - a question: question.asked with its choices, question.list, question.reply; the model gets the answer; another one rejected on /api', async () => {
    const session = (await client.session.create({ title: 'question' })).data!
    await client.session.promptAsync({ sessionID: session.id, parts: [{ type: 'text', text: 'ask: Which colour? | Red | Blue' }] })
    const asked = (await next('question.asked', session.id, TURN_MS)).properties
    expect(asked.questions).toEqual([
      {
        question: 'Which colour?',
        header: 'Choice',
        options: [expect.objectContaining({ label: 'Red' }), expect.objectContaining({ label: 'Blue' })],
        multiple: false,
        custom: true,
      },
    ])
    expect(asked.tool?.callID).toEqual(expect.any(String))
    expect((await client.question.list()).data?.map((q) => q.id)).toContain(asked.id)
    expect((await client.question.reply({ requestID: asked.id, answers: [['Blue']] })).data).toBe(true)
    expect((await next('question.replied', session.id)).properties).toEqual({ sessionID: session.id, requestID: asked.id, answers: [['Blue']] })
    await next('session.idle', session.id, TURN_MS)
    expect(fixture.modelSaw('=\\"Blue\\"')).toBe(true)

    await client.session.promptAsync({ sessionID: session.id, parts: [{ type: 'text', text: 'ask: Which size? | S | L' }] })
    const second = ((await events.next((e) => is('question.asked', session.id)(e) && e.properties.id !== asked.id, TURN_MS)) as Of<'question.asked'>).properties
    expect((await client.v2.session.question.list({ sessionID: session.id })).data?.data.map((q) => q.id)).toEqual([second.id])
    expect((await client.v2.session.question.reject({ sessionID: session.id, requestID: second.id })).response.status).toBe(204)
    expect((await next('question.rejected', session.id)).properties).toEqual({ sessionID: session.id, requestID: second.id })
    await events.next(
      (e) => is('session.idle', session.id)(e) && events.events.indexOf(e) > events.events.findIndex(is('question.rejected', session.id)),
      TURN_MS,
    )
  })
})
