/**
 * The legacy OpenCode SDK client (`@opencode-ai/sdk`, path `{id}` params,
 * `{body, path}` options) against the service with the fake CLI.
 */
import { createOpencodeClient, type Event, type OpencodeClient, type ToolPart } from '@opencode-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { StreamCollector } from './sdk-events.ts'

describe('opencode sdk legacy - real client against the service', () => {
  let stack: Stack
  let client: OpencodeClient
  const aborts: AbortController[] = []

  beforeAll(async () => {
    stack = await startStack()
    client = createOpencodeClient({ baseUrl: stack.url })
  })
  afterAll(async () => {
    for (const controller of aborts) controller.abort()
    await stack.close()
  })

  it('create, subscribe, promptAsync, then the part sequence of a tool turn', async () => {
    const controller = new AbortController()
    aborts.push(controller)
    const { stream } = await client.event.subscribe({ signal: controller.signal, sseMaxRetryAttempts: 1 })
    const events = new StreamCollector<Event>(stream)
    await events.next((e) => e.type === 'server.connected')

    const created = await client.session.create({ body: { title: 'legacy' } })
    const id = created.data!.id
    expect(created.data).toMatchObject({ id: expect.stringMatching(/^ses_/), title: 'legacy', version: '0.1.0' })
    const accepted = await client.session.promptAsync({ path: { id }, body: { parts: [{ type: 'text', text: 'tool: printf ok' }] } })
    expect(accepted.error).toBeUndefined()
    await events.next((e) => e.type === 'session.idle' && e.properties.sessionID === id)

    const parts = events.events.flatMap((e) => (e.type === 'message.part.updated' && e.properties.part.sessionID === id ? [e.properties.part] : []))
    const tools = parts.filter((p): p is ToolPart => p.type === 'tool')
    expect(tools.map((p) => [p.id, p.callID, p.state.status])).toEqual([
      [tools[0]!.id, tools[0]!.callID, 'running'],
      [tools[0]!.id, tools[0]!.callID, 'completed'],
    ])
    expect(tools[1]!.state).toMatchObject({ status: 'completed', input: { command: 'printf ok' }, output: 'ok' })
    // The order a client renders: reasoning, text, tool, text — all in one assistant message.
    // (The user's text part has no time: it is never streamed.)
    const closed = parts.filter(
      (p) => ((p.type === 'text' || p.type === 'reasoning') && p.time?.end !== undefined) || (p.type === 'tool' && p.state.status === 'completed'),
    )
    expect(closed.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool', 'text'])
    expect(new Set(closed.map((p) => p.messageID)).size).toBe(1)
  })

  it('prompt (blocking), get, list, delete and the 404 body', async () => {
    const id = (await client.session.create({ body: {} })).data!.id
    const answer = await client.session.prompt({ path: { id }, body: { parts: [{ type: 'text', text: 'legacy hello' }] } })
    expect(answer.data!.info).toMatchObject({ role: 'assistant', sessionID: id })
    expect(answer.data!.parts.some((p) => p.type === 'text' && p.text === 'Echo: legacy hello')).toBe(true)

    expect((await client.session.get({ path: { id } })).data).toMatchObject({ id })
    expect((await client.session.list()).data!.some((s) => s.id === id)).toBe(true)
    expect((await client.session.delete({ path: { id } })).data).toBe(true)

    const missing = await client.session.get({ path: { id } })
    expect(missing.response.status).toBe(404)
    expect(missing.error).toEqual({ name: 'NotFoundError', data: { message: `Session not found: ${id}` } })
    const promptMissing = await client.session.prompt({ path: { id: 'ses_unknown' }, body: { parts: [{ type: 'text', text: 'x' }] } })
    expect(promptMissing.error).toEqual({ name: 'NotFoundError', data: { message: 'Session not found: ses_unknown' } })
  })
})
