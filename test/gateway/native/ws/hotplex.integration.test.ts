import { mkdtemp, realpath, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../../fixtures/stack.ts'
import { until } from '../../../fixtures/until.ts'

/**
 * HotPlex's own clients against the `hotplex` dialect: each test sends what one of them sends
 * and reads the field paths it reads (aaronwong1989/hotplex v0.10–v0.15 and hrygo/hotplex:
 * _examples/node_claude_websocket/client.js and enterprise_client.js, sdks/typescript and
 * sdks/python).
 */
type Msg = Record<string, any> // the clients read untyped JSON

class HotplexSocket {
  readonly messages: Msg[] = []
  readonly socket: WebSocket
  private constructor(socket: WebSocket) {
    this.socket = socket
    socket.on('message', (data) => this.messages.push(JSON.parse(data.toString()) as Msg))
  }

  static async open(url: string): Promise<HotplexSocket> {
    const socket = new WebSocket(url)
    const client = new HotplexSocket(socket)
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve())
      socket.once('error', reject)
    })
    return client
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame))
  }

  async next(match: (msg: Msg) => boolean): Promise<Msg> {
    await until(
      () => this.messages.some(match),
      () => `a matching message; got ${JSON.stringify(this.messages.slice(-5))}`,
      15_000,
    )
    return this.messages.find(match)!
  }

  of(sessionId: string): Msg[] {
    return this.messages.filter((msg) => msg.session_id === sessionId)
  }
}

describe('hotplex dialect', () => {
  let stack: Stack
  /** client.js sends `work_dir: process.cwd()`: an absolute path, allowed here by `session.work_dir_roots`. */
  let root: string
  const sockets: HotplexSocket[] = []
  const open = async (query = '?dialect=hotplex') => {
    const client = await HotplexSocket.open(stack.wsUrl + query)
    sockets.push(client)
    return client
  }

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ar-hotplex-')))
    stack = await startStack({ session: { work_dir_roots: [root] } })
  })
  afterAll(async () => {
    for (const client of sockets) client.socket.close()
    await stack.close()
    await rm(root, { recursive: true, force: true })
  })

  it('client.js - answer text from data.event_data, stats from data.stats on completed, system_prompt taken', async () => {
    const client = await open()
    client.send({
      type: 'execute',
      session_id: 'quick-start-demo',
      system_prompt: 'Respond only in Haiku format.',
      prompt: 'Tell me about HotPlex.',
      work_dir: root,
    })
    const completed = await client.next((msg) => msg.event === 'completed')
    const answer = client
      .of('quick-start-demo')
      .filter((msg) => msg.event === 'answer')
      .map((msg) => msg.data.event_data)
      .join('')
    expect(answer).toBe('Echo: Tell me about HotPlex.')
    expect(completed.data.session_id).toBe('quick-start-demo')
    expect(completed.data.stats.total_duration_ms).toBeGreaterThanOrEqual(0)
    expect(completed.data.stats.input_tokens).toBeGreaterThan(0)
    expect(completed.data.stats.output_tokens).toBeGreaterThan(0)
    // HotPlex sends no greeting frame and no deltas.
    expect(client.messages.some((msg) => msg.type === 'server.connected')).toBe(false)
    expect(client.messages.some((msg) => String(msg.event).endsWith('_delta'))).toBe(false)
    // system_prompt is the session's instructions: a changed one reaches the agent with the turn.
    client.send({ type: 'execute', session_id: 'quick-start-demo', system_prompt: 'Answer in prose.', prompt: 'again', work_dir: root })
    await client.next((msg) => msg.event === 'completed' && msg !== completed)
    const answers = client.of('quick-start-demo').filter((msg) => msg.event === 'answer')
    expect(answers.at(-1)!.data.event_data).toContain('<instructions>\nAnswer in prose.\n</instructions>')
  })

  it('enterprise_client.js - thinking, tool name, answer, session_stats before completed, all with request_id', async () => {
    const client = await open()
    client.send({ type: 'execute', request_id: 1, session_id: 'enterprise-demo', prompt: 'tool: echo hi', work_dir: 'ent', system_prompt: null })
    await client.next((msg) => msg.event === 'completed')
    const events = client.of('enterprise-demo')
    expect(events.map((msg) => msg.event)).toEqual(['thinking', 'answer', 'tool_use', 'tool_result', 'answer', 'session_stats', 'completed'])
    expect(events.every((msg) => msg.request_id === 1)).toBe(true)
    const payload = (event: string) => events.find((msg) => msg.event === event)!.data
    expect(typeof payload('thinking').event_data).toBe('string')
    expect(payload('thinking').event_data).not.toBe('')
    expect(payload('tool_use').event_data).toBe('Bash')
    const answer = events
      .filter((msg) => msg.event === 'answer')
      .map((msg) => msg.data.event_data)
      .join('')
    expect(answer).toContain('hi')
    // What the client resolves with: pending.sessionStats, read as result.stats.*.
    const stats = payload('session_stats')
    expect(stats.input_tokens).toBeGreaterThan(0)
    expect(stats.output_tokens).toBeGreaterThan(0)
    expect(stats.total_duration_ms).toBeGreaterThanOrEqual(0)
    expect(stats).toMatchObject({ session_id: 'enterprise-demo', tool_call_count: 1, tools_used: ['Bash'], model_used: 'claude-fake-1', is_error: false })
    expect(stats.total_tokens).toBe(stats.input_tokens + stats.output_tokens + stats.cache_read_tokens + stats.cache_write_tokens)
    expect(typeof stats.total_cost_usd).toBe('number')
  })

  it('enterprise_client.js - version is data.version; stats is data; stop is data.session_id', async () => {
    const client = await open()
    client.send({ type: 'version' })
    expect((await client.next((msg) => msg.event === 'version')).data.version).toBe('2.1.330 (Claude Code)')
    client.send({ type: 'execute', request_id: 1, session_id: 'ent-stop', prompt: 'sleep: 60', work_dir: 'ent-stop' })
    await client.next((msg) => msg.event === 'tool_use' && msg.session_id === 'ent-stop')
    client.send({ type: 'stop', request_id: 2, session_id: 'ent-stop', reason: 'client_request' })
    const stopped = await client.next((msg) => msg.event === 'stopped')
    expect(stopped).toMatchObject({ request_id: 2, data: { session_id: 'ent-stop' } })
    client.send({ type: 'stats', request_id: 3, session_id: 'ent-stop' })
    const stats = await client.next((msg) => msg.event === 'stats')
    expect(stats.request_id).toBe(3)
    expect(stats.data).toMatchObject({ session_id: 'ent-stop', tool_call_count: expect.any(Number), input_tokens: expect.any(Number) })
  })

  it('enterprise_client.js - an error names its message in data.message, our code beside it', async () => {
    const client = await open()
    client.send({ type: 'stats', request_id: 4, session_id: 'never-seen' })
    const error = await client.next((msg) => msg.event === 'error')
    expect(error.request_id).toBe(4)
    expect(error.data.message).toMatch(/never-seen|session/i)
    expect(error.error.code).toBe('SESSION_NOT_FOUND')
    client.send({ type: 'execute', request_id: 5, session_id: 'ent-fail', prompt: 'fail' })
    const failed = await client.next((msg) => msg.event === 'error' && msg.request_id === 5)
    expect(failed.data.message).not.toBe('')
    expect(failed.error.code).toBe('ENGINE_ERROR')
  })

  it('TypeScript and Python SDKs - type, data and meta at the top; config carries session and work_dir; session_stats ends the loop', async () => {
    const client = await open()
    client.send({ request_id: 1, type: 'execute', prompt: 'tool: echo sdk', config: { work_dir: 'sdk', session_id: 'sdk-1', task_instructions: 'be brief' } })
    await client.next((msg) => msg.type === 'session_stats')
    const events = client.of('sdk-1')
    const toolUse = events.find((msg) => msg.type === 'tool_use')!
    expect(toolUse.meta).toMatchObject({ tool_name: 'Bash', status: 'running', input_summary: 'echo sdk' })
    expect(toolUse.meta.tool_id).toMatch(/./)
    const toolResult = events.find((msg) => msg.type === 'tool_result')!
    expect(toolResult.meta).toMatchObject({ tool_name: 'Bash', tool_id: toolUse.meta.tool_id, status: 'success' })
    expect(toolResult.data.event_data).toBe('sdk')
    expect(events.find((msg) => msg.type === 'session_stats')!.data.tool_call_count).toBe(1)
  })

  it('server.ws_dialect: hotplex - a client that names no dialect gets HotPlex shapes; ?dialect=native gets ours', async () => {
    const hotplexStack = await startStack({ server: { ws_dialect: 'hotplex' } })
    try {
      const hotplex = await HotplexSocket.open(hotplexStack.wsUrl)
      const native = await HotplexSocket.open(`${hotplexStack.wsUrl}?dialect=native`)
      sockets.push(hotplex, native)
      hotplex.send({ type: 'execute', session_id: 'listener-1', prompt: 'hello' })
      const completed = await hotplex.next((msg) => msg.event === 'completed')
      expect(completed.data.stats.output_tokens).toBeGreaterThan(0)
      expect(hotplex.messages.find((msg) => msg.event === 'answer')!.data.event_data).toBe('Echo: hello')
      expect((await native.next((msg) => msg.type === 'server.connected')).type).toBe('server.connected')
      native.send({ type: 'execute', session_id: 'listener-2', prompt: 'hello' })
      expect((await native.next((msg) => msg.event === 'answer')).data).toBe('Echo: hello')
    } finally {
      await hotplexStack.close()
    }
  })

  it('handshake - an unknown dialect is refused before the upgrade', async () => {
    const socket = new WebSocket(`${stack.wsUrl}?dialect=bogus`)
    const status = await new Promise<number>((resolve, reject) => {
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
      socket.once('open', () => reject(new Error('the handshake was accepted')))
      socket.once('error', () => {})
    })
    expect(status).toBe(400)
  })
})
