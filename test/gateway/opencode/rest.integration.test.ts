/**
 * The REST + SSE layer through a plain HTTP client (fetch), with the spec's
 * shapes (§2.1 `{info}`, §2.5 `prompt`, 202) and the raw SSE framing, against
 * the in-process stack with the fake CLI.
 */
import { readdir, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { SseClient } from '../../fixtures/sse-client.ts'

async function call(stack: Stack, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { ...headers } }
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
  }
  const response = await fetch(stack.url + url, init)
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) }
}

/** Pids of live processes working inside `dir`. */
async function processesIn(dir: string): Promise<number[]> {
  const found: number[] = []
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const cwd = await readlink(`/proc/${name}/cwd`).catch(() => '')
    if (cwd === dir || cwd.startsWith(dir + '/')) found.push(Number(name))
  }
  return found
}

describe('opencode rest - plain HTTP with the spec shapes', () => {
  let stack: Stack
  const streams: SseClient[] = []
  const subscribe = async (url: string) => {
    const client = await SseClient.open(stack.url + url)
    streams.push(client)
    await client.next((data) => (data.payload ?? data).type === 'server.connected')
    return client
  }

  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    for (const stream of streams) stream.close()
    await stack.close()
  })

  it('create - no body: OpenCode fields flat and under info, ses_ id, default title and project', async () => {
    const { status, body } = await call(stack, 'POST', '/session')
    expect(status).toBe(200)
    expect(body.id).toMatch(/^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    const { info, ...flat } = body
    expect(info).toEqual(flat)
    expect(body.info).toMatchObject({ id: body.id, projectID: 'global', version: '0.1.0' })
    expect(body.info.title).toMatch(/^New session - \d{4}-\d\d-\d\dT/)
    expect(body.info.time.created).toBeGreaterThan(Date.now() - 60_000)
    expect(body.info.directory).toBe(path.join(path.resolve(stack.config.session.work_dir), body.id))
  })

  it('create - a work_dir outside the sandbox base is refused at creation: 400 WORK_DIR_REJECTED, no session, no server path', async () => {
    const base = path.resolve(stack.config.session.work_dir)
    for (const [i, workDir] of ['../..', '../outside', 'a/../../b', '/etc', `${base}-other/x`].entries()) {
      const id = `escape-at-create-${i}`
      const { status, body } = await call(stack, 'POST', '/session', { session_id: id, work_dir: workDir })
      expect(status, workDir).toBe(400)
      expect(body, workDir).toEqual({ name: 'BadRequest', data: { code: 'WORK_DIR_REJECTED', message: expect.stringContaining('outside the sandbox base') } })
      if (!workDir.startsWith(base)) expect(body.data.message).not.toContain(base) // only the client's own path is echoed
      expect((await call(stack, 'GET', `/session/${id}`)).status, workDir).toBe(404)
    }
    const inside = await call(stack, 'POST', '/session', { session_id: 'inside-at-create', work_dir: path.join(base, 'team', 'proj') })
    expect(inside.status).toBe(200)
    expect(inside.body.info.directory).toBe(path.join(base, 'team', 'proj'))
  })

  it('create - an empty JSON body, as OpenCode clients send it, is no body', async () => {
    const { status, body } = await call(stack, 'POST', '/session', '', { 'content-type': 'application/json' })
    expect(status).toBe(200)
    expect(body.info.id).toMatch(/^ses_/)
  })

  it('create - session_id and work_dir; the same id again answers the same session; another work_dir is a conflict', async () => {
    const first = await call(stack, 'POST', '/session', { session_id: 'spec-client-1', work_dir: 'proj-1', title: 'My work' })
    expect(first.body.info).toMatchObject({
      id: 'spec-client-1',
      directory: path.join(path.resolve(stack.config.session.work_dir), 'proj-1'),
      title: 'My work',
    })
    const again = await call(stack, 'POST', '/session', { session_id: 'spec-client-1' })
    expect(again.status).toBe(200)
    expect(again.body.info.time.created).toBe(first.body.info.time.created)
    const clash = await call(stack, 'POST', '/session', { session_id: 'spec-client-1', work_dir: 'elsewhere' })
    expect(clash.status).toBe(409)
    expect(clash.body).toMatchObject({ name: 'ConflictError', data: { code: 'WORK_DIR_MISMATCH' } })
  })

  it('prompt - the spec body answers 202 at once; the output comes on /global/event in envelopes', async () => {
    const events = await subscribe('/global/event')
    const { body: session } = await call(stack, 'POST', '/session', { session_id: 'spec-prompt-1' })
    const accepted = await call(stack, 'POST', '/session/spec-prompt-1/message', { prompt: 'hello spec', system_prompt: 'Be brief.' })
    expect(accepted.status).toBe(202)
    expect(accepted.body).toEqual({ session_id: 'spec-prompt-1', turn_id: expect.stringMatching(/^turn_/), message_id: expect.stringMatching(/^msg_/) })

    const text = await events.next(
      (d) =>
        d.payload.type === 'message.part.updated' &&
        d.payload.properties.part.type === 'text' &&
        d.payload.properties.part.time?.end !== undefined &&
        d.payload.properties.part.messageID !== accepted.body.message_id,
    )
    expect(text).toEqual({
      directory: session.info.directory,
      project: 'global',
      payload: {
        id: expect.stringMatching(/^evt_/),
        type: 'message.part.updated',
        properties: {
          sessionID: 'spec-prompt-1',
          time: expect.any(Number),
          part: {
            id: expect.stringMatching(/^prt_/),
            sessionID: 'spec-prompt-1',
            messageID: expect.stringMatching(/^msg_/),
            type: 'text',
            text: 'Echo: hello spec',
            time: { start: expect.any(Number), end: expect.any(Number) },
          },
        },
      },
    })
    await events.next((d) => d.payload.type === 'session.idle' && d.payload.properties.sessionID === 'spec-prompt-1')
    // The user message carries the prompt and the system prompt, under the id the 202 named.
    const messages = await call(stack, 'GET', '/session/spec-prompt-1/message')
    expect(messages.body.map((m: any) => m.info.role)).toEqual(['user', 'assistant'])
    expect(messages.body[0]).toMatchObject({ info: { id: accepted.body.message_id, system: 'Be brief.' }, parts: [{ type: 'text', text: 'hello spec' }] })
    expect(messages.body[1].info).toMatchObject({ parentID: accepted.body.message_id, modelID: 'claude-fake-1', finish: 'stop' })
  })

  it('prompt - a long turn: the blocking answer and GET /message hold every part in order, as JSON with its content type', async () => {
    const { body: session } = await call(stack, 'POST', '/session', {})
    const answer = await call(stack, 'POST', `/session/${session.id}/message`, { parts: [{ type: 'text', text: 'burst: 1500' }] })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const texts = answer.body.parts.filter((part: { type: string }) => part.type === 'text').map((part: { text: string }) => part.text)
    expect(texts).toEqual(Array.from({ length: 1500 }, (_, i) => `part ${i + 1}`))
    expect(answer.body.parts.at(-1).type).toBe('step-finish')
    const listed = await call(stack, 'GET', `/session/${session.id}/message`)
    expect(listed.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(listed.body.map((m: { info: { role: string } }) => m.info.role)).toEqual(['user', 'assistant'])
    expect(listed.body[1]).toEqual(answer.body)
    expect((await call(stack, 'GET', `/session/${session.id}/message?limit=1`)).body).toEqual([answer.body])
  })

  it('sse - framing is `data: <json>` + blank line, server.connected first, headers stop buffering', async () => {
    const events = await subscribe('/event')
    expect(events.response.status).toBe(200)
    expect(events.response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(events.response.headers.get('cache-control')).toContain('no-cache')
    expect(events.response.headers.get('x-accel-buffering')).toBe('no')
    await call(stack, 'POST', '/session', { session_id: 'sse-frames-1' })
    await call(stack, 'POST', '/session/sse-frames-1/prompt_async', { prompt: 'frames' })
    await events.next((d) => d.type === 'session.idle' && d.properties.sessionID === 'sse-frames-1')
    expect(events.frames[0]!.data).toEqual({ id: expect.stringMatching(/^evt_/), type: 'server.connected', properties: {} })
    for (const frame of events.frames) expect(frame.raw).toMatch(/^data: \{.*\}$/s)
    expect(events.frames.every((frame) => !frame.raw.includes('\n'))).toBe(true)
    const types = events.data.filter((d) => d.properties.sessionID === 'sse-frames-1').map((d) => d.type)
    expect(types).toEqual(expect.arrayContaining(['message.updated', 'message.part.updated', 'message.part.delta', 'session.status', 'session.idle']))
  })

  it("404 - an unknown session on every route answers OpenCode's NotFoundError body", async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/session/nope-1'],
      ['DELETE', '/session/nope-1'],
      ['POST', '/session/nope-1/abort'],
      ['GET', '/session/nope-1/message'],
      ['POST', '/session/nope-1/message', { prompt: 'x' }],
      ['POST', '/session/nope-1/prompt_async', { prompt: 'x' }],
    ]
    for (const [method, url, body] of routes) {
      const response = await call(stack, method, url, body)
      expect({ method, url, status: response.status, body: response.body }).toEqual({
        method,
        url,
        status: 404,
        body: { name: 'NotFoundError', data: { message: 'Session not found: nope-1' } },
      })
    }
  })

  it('400 - a body without prompt text, or not JSON, names what is wrong', async () => {
    await call(stack, 'POST', '/session', { session_id: 'bad-body-1' })
    const none = await call(stack, 'POST', '/session/bad-body-1/message', {})
    expect(none.status).toBe(400)
    expect(none.body).toMatchObject({ name: 'BadRequest', data: { code: 'BAD_REQUEST' } })
    expect(none.body.data.message).toContain('"prompt"')
    const parts = await call(stack, 'POST', '/session/bad-body-1/prompt_async', { parts: [{ type: 'text', text: '' }] })
    expect(parts.status).toBe(400)
    expect(parts.body.data.message).toContain('"parts"')
    const broken = await call(stack, 'POST', '/session/bad-body-1/message', '{"prompt": ', { 'content-type': 'application/json' })
    expect(broken.status).toBe(400)
    expect(broken.body).toMatchObject({ name: 'BadRequest', data: { code: 'BAD_JSON' } })
  })

  it('status and abort - busy while a turn runs; abort stops it; the assistant message is aborted', async () => {
    const events = await subscribe('/event')
    await call(stack, 'POST', '/session', { session_id: 'abort-1' })
    await call(stack, 'POST', '/session/abort-1/prompt_async', { prompt: 'sleep: 30' })
    await events.next((d) => d.type === 'message.part.updated' && d.properties.sessionID === 'abort-1' && d.properties.part.type === 'tool')
    expect((await call(stack, 'GET', '/session/status')).body['abort-1']).toEqual({ type: 'busy' })
    const aborted = await call(stack, 'POST', '/session/abort-1/abort')
    expect(aborted).toMatchObject({ status: 200, body: true })
    const error = await events.next((d) => d.type === 'session.error' && d.properties.sessionID === 'abort-1')
    expect(error.properties.error).toMatchObject({ name: 'MessageAbortedError' })
    await events.next((d) => d.type === 'session.idle' && d.properties.sessionID === 'abort-1')
    expect((await call(stack, 'GET', '/session/status')).body['abort-1']).toEqual({ type: 'idle' })
    const tool = events.data.filter((d) => d.type === 'message.part.updated' && d.properties.part.type === 'tool').at(-1)
    expect(tool.properties.part.state.status).toBe('error')
  })

  it("delete - frees the session's CLI process, forgets the session, announces session.deleted", async () => {
    const events = await subscribe('/event')
    await call(stack, 'POST', '/session', { session_id: 'delete-1' })
    await call(stack, 'POST', '/session/delete-1/prompt_async', { prompt: 'first' })
    await events.next((d) => d.type === 'session.idle' && d.properties.sessionID === 'delete-1')
    const sandbox = await realpath(path.join(stack.dir, 'sessions', 'delete-1'))
    expect((await processesIn(sandbox)).length).toBeGreaterThan(0) // the CLI stays up between turns
    const deleted = await call(stack, 'DELETE', '/session/delete-1')
    expect(deleted).toMatchObject({ status: 200, body: true })
    expect(await processesIn(sandbox)).toEqual([])
    expect((await call(stack, 'GET', '/session/delete-1')).status).toBe(404)
    expect((await call(stack, 'GET', '/session')).body.map((s: any) => s.id)).not.toContain('delete-1')
    await events.next((d) => d.type === 'session.deleted' && d.properties.sessionID === 'delete-1')
  })

  it('list - sessions, most recently updated first', async () => {
    await call(stack, 'POST', '/session', { session_id: 'list-a' })
    await call(stack, 'POST', '/session', { session_id: 'list-b' })
    await call(stack, 'POST', '/session/list-a/message', { prompt: 'touch a' })
    const { body } = await call(stack, 'GET', '/session')
    const ids = body.map((s: any) => s.id)
    expect(ids.indexOf('list-a')).toBeLessThan(ids.indexOf('list-b'))
    expect(body.find((s: any) => s.id === 'list-b')).toMatchObject({ id: 'list-b', projectID: 'global' })
  })

  it('config - version and capabilities, the engine from a runner, nothing secret', async () => {
    const { status, body } = await call(stack, 'GET', '/config')
    expect(status).toBe(200)
    expect(body).toMatchObject({
      share: 'disabled',
      permission: 'ask',
      version: '0.1.0',
      engines: [{ name: 'claude', version: '2.1.330 (Claude Code)' }],
      surfaces: { websocket: '/ws/v1/agent', sse: ['/event', '/global/event'], chat: '/v1/agent/chat' },
      auth: { enabled: false },
    })
    const text = JSON.stringify(body)
    expect(text).not.toMatch(/api[_-]?key"\s*:|token|secret|password|\/tmp\//i)
  })
})
