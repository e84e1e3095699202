/**
 * The real OpenCode SDK (v2 client, @opencode-ai/sdk 1.19.3) against the
 * service with the fake CLI: the calls an OpenCode integration makes.
 */
import { createOpencodeClient, type Event, type OpencodeClient, type Part, type ToolPart } from '@opencode-ai/sdk/v2/client'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { StreamCollector } from './sdk-events.ts'

const partsOf = (events: Event[], sessionID: string): Part[] =>
  events.flatMap((e) => (e.type === 'message.part.updated' && e.properties.sessionID === sessionID ? [e.properties.part] : []))

describe('opencode sdk v2 - real client against the service', () => {
  let stack: Stack
  let client: OpencodeClient
  const aborts: AbortController[] = []

  /** Subscribes to /event and waits for server.connected, as the stream opens only when iterated. */
  const subscribe = async () => {
    const controller = new AbortController()
    aborts.push(controller)
    const { stream } = await client.event.subscribe(undefined, { signal: controller.signal, sseMaxRetryAttempts: 1 })
    const events = new StreamCollector<Event>(stream)
    await events.next((e) => e.type === 'server.connected')
    return { events, controller }
  }

  beforeAll(async () => {
    stack = await startStack()
    client = createOpencodeClient({ baseUrl: stack.url })
  })
  afterAll(async () => {
    for (const controller of aborts) controller.abort()
    await stack.close()
  })

  it('create, subscribe, promptAsync - a tool turn: one tool part from running to completed', async () => {
    const { events } = await subscribe()
    const created = await client.session.create({ title: 'sdk v2' })
    expect(created.error).toBeUndefined()
    const sessionID = created.data!.id
    expect(created.data).toMatchObject({ id: expect.stringMatching(/^ses_/), title: 'sdk v2', projectID: 'global', slug: expect.any(String) })

    const accepted = await client.session.promptAsync({ sessionID, parts: [{ type: 'text', text: 'tool: echo hi' }], system: 'Be brief.' })
    expect(accepted.error).toBeUndefined()
    expect(accepted.response.status).toBe(202)
    await events.next((e) => e.type === 'session.idle' && e.properties.sessionID === sessionID)

    const ofSession = events.events.filter((e) => 'sessionID' in e.properties && e.properties.sessionID === sessionID)
    // Turn bracket: busy first, then messages; idle last.
    const statuses = ofSession.filter((e) => e.type === 'session.status').map((e) => (e.type === 'session.status' ? e.properties.status.type : ''))
    expect(statuses).toEqual(['busy', 'idle'])

    const tools = partsOf(events.events, sessionID).filter((p): p is ToolPart => p.type === 'tool')
    expect(tools.map((p) => p.state.status)).toEqual(['running', 'completed'])
    const [running, completed] = tools as [ToolPart, ToolPart]
    expect(completed.id).toBe(running.id)
    expect(completed.callID).toBe(running.callID)
    expect(running.callID).toMatch(/^toolu_/)
    expect(running.tool).toBe('Bash')
    expect(running.state).toMatchObject({ status: 'running', input: { command: 'echo hi' }, time: { start: expect.any(Number) } })
    expect(completed.state).toMatchObject({ status: 'completed', input: { command: 'echo hi' }, output: 'hi', title: expect.any(String) })
    if (completed.state.status === 'completed' && running.state.status === 'running') {
      expect(completed.state.time.end).toBeGreaterThanOrEqual(running.state.time.start)
    }

    // The final text parts, in order, and the reasoning before them.
    const closedTexts = partsOf(events.events, sessionID).filter((p) => p.type === 'text' && p.time?.end !== undefined)
    expect(closedTexts.map((p) => (p.type === 'text' ? p.text : ''))).toEqual(['Let me run a command.', 'Done. The tool said: "hi"'])
    expect(partsOf(events.events, sessionID).some((p) => p.type === 'reasoning' && p.text.includes('Bash'))).toBe(true)
    // Token deltas stream each text into its part, a delta per piece, and the pieces make the full text it is closed with.
    const finalText = closedTexts.at(-1)!
    const deltas = ofSession.filter((e) => e.type === 'message.part.delta' && e.properties.partID === finalText.id)
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.map((e) => (e.type === 'message.part.delta' ? e.properties.delta : '')).join('')).toBe('Done. The tool said: "hi"')

    // The assistant message ends with time.completed, tokens and cost.
    const assistant = ofSession.filter((e) => e.type === 'message.updated' && e.properties.info.role === 'assistant').at(-1)
    expect(assistant?.type === 'message.updated' && assistant.properties.info).toMatchObject({
      role: 'assistant',
      time: { completed: expect.any(Number) },
      tokens: { input: 24, output: 84 },
      cost: 0.001,
      finish: 'stop',
    })
    // The same parts are what GET /session/{id}/message answers.
    const messages = await client.session.messages({ sessionID })
    expect(messages.data!.map((m) => m.info.role)).toEqual(['user', 'assistant'])
    expect(messages.data![0]!.info).toMatchObject({ role: 'user', system: 'Be brief.' })
    expect(messages.data![1]!.parts.map((p) => p.type)).toEqual(['step-start', 'reasoning', 'text', 'tool', 'text', 'step-finish'])
    expect(messages.data![1]!.parts.find((p) => p.type === 'tool')).toEqual(completed)
  })

  it('prompt - blocks until the turn ends and answers {info, parts} of the assistant message', async () => {
    const sessionID = (await client.session.create()).data!.id
    const result = await client.session.prompt({
      sessionID,
      parts: [{ type: 'text', text: 'hello blocking' }],
      model: { providerID: 'anthropic', modelID: 'claude-x' },
      agent: 'plan',
    })
    expect(result.error).toBeUndefined()
    expect(result.response.status).toBe(200)
    const { info, parts } = result.data!
    expect(info).toMatchObject({
      role: 'assistant',
      sessionID,
      agent: 'plan',
      providerID: 'anthropic',
      modelID: 'claude-fake-1',
      time: { completed: expect.any(Number) },
    })
    expect(parts.filter((p) => p.type === 'text').map((p) => (p.type === 'text' ? p.text : ''))).toEqual(['Echo: hello blocking'])
    expect(parts.at(-1)).toMatchObject({ type: 'step-finish', reason: 'stop' })
  })

  it('get, list, status, delete - and the 404 body after delete', async () => {
    const sessionID = (await client.session.create({ title: 'to delete' })).data!.id
    const got = await client.session.get({ sessionID })
    expect(got.data).toMatchObject({ id: sessionID, title: 'to delete' })
    const listed = await client.session.list()
    expect(listed.data!.map((s) => s.id)).toContain(sessionID)
    const status = await client.session.status()
    expect(status.data![sessionID]).toEqual({ type: 'idle' })

    const deleted = await client.session.delete({ sessionID })
    expect(deleted.data).toBe(true)
    const gone = await client.session.get({ sessionID })
    expect(gone.response.status).toBe(404)
    expect(gone.error).toEqual({ name: 'NotFoundError', data: { message: `Session not found: ${sessionID}` } })
    expect((await client.session.list()).data!.map((s) => s.id)).not.toContain(sessionID)
  })

  it('abort - ends a running turn: aborted assistant message, session.error, idle', async () => {
    const { events } = await subscribe()
    const sessionID = (await client.session.create()).data!.id
    await client.session.promptAsync({ sessionID, parts: [{ type: 'text', text: 'sleep: 30' }] })
    await events.next((e) => e.type === 'message.part.updated' && e.properties.part.sessionID === sessionID && e.properties.part.type === 'tool')
    const aborted = await client.session.abort({ sessionID })
    expect(aborted.data).toBe(true)
    const error = await events.next((e) => e.type === 'session.error' && e.properties.sessionID === sessionID)
    expect(error.type === 'session.error' && error.properties.error?.name).toBe('MessageAbortedError')
    await events.next((e) => e.type === 'session.idle' && e.properties.sessionID === sessionID)
  })

  it('reconnecting subscriber - a new stream sees the rest of the turn; messages give what was missed', async () => {
    const first = await subscribe()
    const sessionID = (await client.session.create()).data!.id
    // The tool waits for a file this test writes once the second stream is up: no race with the clock.
    const command = 'until [ -f go ]; do sleep 0.05; done; echo late'
    await client.session.promptAsync({ sessionID, parts: [{ type: 'text', text: `tool: ${command}` }] })
    const running = await first.events.next(
      (e) => e.type === 'message.part.updated' && e.properties.part.sessionID === sessionID && e.properties.part.type === 'tool',
    )
    first.controller.abort() // the client goes away mid-turn
    await first.events.finished

    const second = await subscribe()
    await writeFile(path.join(stack.dir, 'sessions', sessionID, 'go'), '')
    const completed = await second.events.next(
      (e) =>
        e.type === 'message.part.updated' &&
        e.properties.part.sessionID === sessionID &&
        e.properties.part.type === 'tool' &&
        e.properties.part.state.status === 'completed',
    )
    const runningPart = running.type === 'message.part.updated' ? running.properties.part : undefined
    const completedPart = completed.type === 'message.part.updated' ? completed.properties.part : undefined
    expect(completedPart?.id).toBe(runningPart?.id)
    await second.events.next((e) => e.type === 'session.idle' && e.properties.sessionID === sessionID)
    // What the second stream did not see (the user message, the tool start) is in the messages.
    const messages = (await client.session.messages({ sessionID })).data!
    expect(messages[0]!.parts).toMatchObject([{ type: 'text', text: `tool: ${command}` }])
    expect(messages[1]!.parts.find((p) => p.type === 'tool')).toMatchObject({ id: runningPart?.id, state: { status: 'completed', output: 'late' } })
  })

  it('global.event - envelopes with directory and project; config.get', async () => {
    const controller = new AbortController()
    aborts.push(controller)
    const { stream } = await client.global.event({ signal: controller.signal, sseMaxRetryAttempts: 1 })
    const events = new StreamCollector<any>(stream)
    await events.next((e) => e.payload?.type === 'server.connected')
    const session = (await client.session.create()).data!
    const created = await events.next((e) => e.payload?.type === 'session.created' && e.payload.properties.sessionID === session.id)
    expect(created).toMatchObject({ directory: session.directory, project: 'global', payload: { properties: { info: { id: session.id } } } })
    const config = await client.config.get()
    expect(config.data).toMatchObject({ share: 'disabled' })
  })
})
