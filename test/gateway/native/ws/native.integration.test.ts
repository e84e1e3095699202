import { realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processesUnder } from '../../../fixtures/processes.ts'
import { startStack, type Stack } from '../../../fixtures/stack.ts'
import { WsClient } from '../../../fixtures/ws-client.ts'

const eventsOf = (client: WsClient, sessionId: string) => client.eventsOf(sessionId).map((msg) => msg.event)

describe('native websocket', () => {
  let stack: Stack
  const clients: WsClient[] = []
  const connect = async (suffix = '') => {
    const client = await WsClient.connect(stack.wsUrl + suffix)
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    stack = await startStack({ session: { max_queue: 2 } })
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await stack.close()
  })

  it('execute - streams thinking, tool_use, tool_result, answer, completed with request_id echoed', async () => {
    const client = await connect()
    client.send({ type: 'execute', request_id: 1, session_id: 'tool-1', prompt: 'tool: echo hi' })
    const completed = await client.event('completed', 'tool-1')
    expect(eventsOf(client, 'tool-1')).toEqual(['thinking', 'answer', 'tool_use', 'tool_result', 'answer', 'session_stats', 'completed'])
    const events = client.eventsOf('tool-1')
    expect(events.every((event) => event.request_id === 1)).toBe(true)
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 2)) // seq 1 is the internal turn_started
    const toolUse = events.find((event) => event.event === 'tool_use')!
    const toolResult = events.find((event) => event.event === 'tool_result')!
    expect(toolUse.tool).toMatchObject({ name: 'Bash', input: { command: 'echo hi' } })
    expect(toolResult).toMatchObject({ data: 'hi', is_error: false, tool: { id: (toolUse.tool as { id: string }).id, name: 'Bash' } })
    expect(completed).toMatchObject({ session_id: 'tool-1', stats: { turns: 1, tool_calls: 1, model: 'claude-fake-1' } })
    expect((completed.stats as { output_tokens: number }).output_tokens).toBeGreaterThan(0)
    // session_stats, right before completed: the same counters, and the tools the turn called.
    const summary = events.find((event) => event.event === 'session_stats')!
    expect(summary).toMatchObject({ stats: completed.stats, turn_stats: completed.turn_stats, tools_used: ['Bash'], is_error: false })
  })

  it('execute - without session_id gets a generated one, named on completed', async () => {
    const client = await connect()
    client.send({ type: 'execute', prompt: 'hello there' })
    const completed = await client.event('completed')
    expect(completed.session_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(client.messages.find((msg) => msg.event === 'answer')?.data).toBe('Echo: hello there')
  })

  it('stats - sums turns of the session; version answers the CLI version', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'stats-1', prompt: 'one' })
    await client.event('completed', 'stats-1')
    client.send({ type: 'execute', session_id: 'stats-1', prompt: 'two' })
    await client.next((msg) => msg.event === 'completed' && (msg.stats as { turns: number }).turns === 2)
    client.send({ type: 'stats', session_id: 'stats-1', request_id: 'r-stats' })
    const stats = await client.next((msg) => msg.event === 'stats')
    expect(stats).toMatchObject({ request_id: 'r-stats', session_id: 'stats-1', stats: { turns: 2, total_cost_usd: 0.002 } })
    client.send({ type: 'version', request_id: 9 })
    expect(await client.event('version')).toMatchObject({ request_id: 9, data: '2.1.330 (Claude Code)', engine: 'claude' })
  })

  it('stats - of an unknown session is an error event', async () => {
    const client = await connect()
    client.send({ type: 'stats', session_id: 'never-seen', request_id: 4 })
    expect(await client.event('error')).toMatchObject({ request_id: 4, error: { code: 'SESSION_NOT_FOUND' } })
  })

  it('bad input - malformed JSON, unknown type, missing prompt each get an error and the connection stays usable', async () => {
    const client = await connect()
    client.send('{"type": "execute", ')
    client.send({ type: 'launch', request_id: 2 })
    client.send({ type: 'execute', request_id: 3 })
    client.send({ type: 'execute', request_id: 4, session_id: 'after-errors', prompt: 'still here?' })
    await client.event('completed', 'after-errors')
    const errors = client.messages.filter((msg) => msg.event === 'error')
    expect(errors.map((msg) => (msg.error as { code: string }).code)).toEqual(['BAD_JSON', 'UNKNOWN_TYPE', 'BAD_REQUEST'])
    expect(errors[1]).toMatchObject({ request_id: 2 })
    expect(errors[2]).toMatchObject({ request_id: 3, data: expect.stringContaining('prompt') })
  })

  it('quick-start dialect - session_start then prompt, answered as {type, payload.content}', async () => {
    const client = await connect()
    client.send({ type: 'session_start', session_id: 'qs-1', instructions: 'Answer in French.' })
    client.send({ type: 'prompt', content: 'system?' })
    const done = await client.next((msg) => msg.type === 'completed')
    const answer = client.messages.find((msg) => msg.type === 'answer') as { payload: { content: string; session_id: string } }
    expect(answer.payload).toMatchObject({ content: 'System: Answer in French.', session_id: 'qs-1' })
    expect(done).toMatchObject({ payload: { session_id: 'qs-1', stats: { turns: 1 } } })
  })

  it('instructions - a later change reaches the agent with the turn', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'instr-1', prompt: 'first', instructions: 'v1' })
    await client.event('completed', 'instr-1')
    client.send({ type: 'execute', session_id: 'instr-1', prompt: 'second', instructions: 'v2' })
    await client.next((msg) => msg.event === 'completed' && (msg.stats as { turns: number }).turns === 2)
    const answers = client.eventsOf('instr-1').filter((msg) => msg.event === 'answer')
    expect(answers[1]!.data).toContain('<instructions>\nv2\n</instructions>')
  })

  it('queue - prompts sent during a turn run after it, in order; overflow is an error', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'queue-1', prompt: 'sleep: 1', request_id: 1 })
    client.send({ type: 'execute', session_id: 'queue-1', prompt: 'second', request_id: 2 })
    client.send({ type: 'execute', session_id: 'queue-1', prompt: 'third', request_id: 3 })
    client.send({ type: 'execute', session_id: 'queue-1', prompt: 'fourth', request_id: 4 })
    const overflow = await client.next((msg) => msg.event === 'error' && msg.request_id === 4)
    expect(overflow).toMatchObject({ error: { code: 'QUEUE_FULL' } })
    await client.next((msg) => msg.event === 'completed' && msg.request_id === 3)
    const done = client.eventsOf('queue-1').filter((msg) => msg.event === 'completed')
    expect(done.map((msg) => msg.request_id)).toEqual([1, 2, 3])
    const answers = client
      .eventsOf('queue-1')
      .filter((msg) => msg.event === 'answer')
      .map((msg) => msg.data)
    expect(answers.slice(-2)).toEqual(['Echo: second', 'Echo: third'])
  })

  it('stop - mid-turn answers stopped and leaves no process of the session alive', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'stop-1', prompt: 'sleep: 60', request_id: 1 })
    await client.event('tool_use', 'stop-1')
    const sandbox = await realpath(path.join(stack.config.session.work_dir, 'stop-1'))
    expect((await processesUnder(sandbox)).length).toBeGreaterThan(0)
    client.send({ type: 'stop', session_id: 'stop-1', request_id: 2, reason: 'user pressed stop' })
    const stopped = await client.event('stopped', 'stop-1')
    expect(stopped).toMatchObject({ request_id: 2, data: 'user pressed stop' })
    expect(await processesUnder(sandbox)).toEqual([])
    expect(eventsOf(client, 'stop-1')).not.toContain('completed')
    // The session goes on: the next execute resumes the conversation.
    client.send({ type: 'execute', session_id: 'stop-1', prompt: 'recall', request_id: 3 })
    const next = await client.next((msg) => msg.event === 'completed' && msg.request_id === 3)
    expect(next.data).toContain('sleep: 60')
  })

  it('stop - of a session with nothing running still answers stopped', async () => {
    const client = await connect()
    client.send({ type: 'stop', session_id: 'idle-stop', request_id: 8 })
    expect(await client.event('stopped', 'idle-stop')).toMatchObject({ request_id: 8 })
  })

  it('reconnect - a client that comes back with the session_id sees the rest of the running turn', async () => {
    const first = await connect()
    first.send({ type: 'execute', session_id: 'recon-1', prompt: 'sleep: 1' })
    await first.event('tool_use', 'recon-1')
    await first.close()
    const second = await connect('?session_id=recon-1')
    const completed = await second.event('completed', 'recon-1')
    expect(completed.session_id).toBe('recon-1')
    expect(eventsOf(second, 'recon-1')).toContain('tool_result')
    expect(eventsOf(second, 'recon-1')).not.toContain('tool_use')
  })

  it('work_dir - escaping the sandbox base is rejected with an error event', async () => {
    const client = await connect()
    for (const [i, workDir] of ['../outside', '/etc', 'a/../../b'].entries()) {
      client.send({ type: 'execute', session_id: `escape-${i}`, prompt: 'hi', work_dir: workDir, request_id: i })
      expect(await client.next((msg) => msg.event === 'error' && msg.request_id === i)).toMatchObject({ error: { code: 'WORK_DIR_REJECTED' } })
    }
  })

  it('work_dir - a relative work_dir is where the agent runs', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'wd-1', prompt: 'tool: pwd', work_dir: 'team/project' })
    await client.event('completed', 'wd-1')
    const result = client.eventsOf('wd-1').find((msg) => msg.event === 'tool_result')!
    expect(result.data).toBe(path.join(await realpath(stack.config.session.work_dir), 'team/project'))
    client.send({ type: 'execute', session_id: 'wd-1', prompt: 'hi', work_dir: 'other', request_id: 'mismatch' })
    expect(await client.next((msg) => msg.request_id === 'mismatch')).toMatchObject({ error: { code: 'WORK_DIR_MISMATCH' } })
  })

  it('engine - a CLI that exits mid-turn gives an error, and the next execute resumes', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'crash-1', prompt: 'first words' })
    await client.event('completed', 'crash-1')
    client.send({ type: 'execute', session_id: 'crash-1', prompt: 'crash', request_id: 'boom' })
    expect(await client.next((msg) => msg.request_id === 'boom' && msg.event === 'error')).toMatchObject({ error: { code: 'ENGINE_EXITED' } })
    client.send({ type: 'execute', session_id: 'crash-1', prompt: 'recall', request_id: 'after' })
    const answer = await client.next((msg) => msg.request_id === 'after' && msg.event === 'answer')
    expect(answer.data).toContain('first words')
  })

  it('engine - a failed turn (API error) is an error event with the CLI message', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'fail-1', prompt: 'fail', request_id: 1 })
    const error = await client.event('error', 'fail-1')
    expect(error).toMatchObject({ request_id: 1, error: { code: 'ENGINE_ERROR' } })
    expect(error.data).toContain('500')
  })

  it('engine - noise, unknown lines and a 10 MB line are handled', async () => {
    const client = await connect()
    client.send({ type: 'execute', session_id: 'noise-1', prompt: 'noise' })
    await client.event('completed', 'noise-1')
    client.send({ type: 'execute', session_id: 'noise-1', prompt: 'big: 10000000', request_id: 'big' })
    await client.next((msg) => msg.event === 'completed' && msg.request_id === 'big', 30_000)
    const big = client.eventsOf('noise-1').find((msg) => msg.event === 'answer' && msg.request_id === 'big')!
    expect((big.data as string).length).toBe(10_000_000)
  })
})

describe('native websocket - conversation recovery', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack.close()
  })

  it('resume - a session whose marker was lost continues the CLI conversation anyway', async () => {
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'lost-1', prompt: 'first words' })
    await client.event('completed', 'lost-1')
    // Forget the session on the runner and lose its marker: the CLI still has the conversation.
    await stack.service.bus.request('agent-runtime.place', JSON.stringify({ type: 'close', session_id: 'lost-1' }), { timeoutMs: 5_000 })
    await rm(stack.config.session.marker_dir, { recursive: true, force: true })
    client.send({ type: 'execute', session_id: 'lost-1', prompt: 'recall', request_id: 'again' })
    const done = await client.next((msg) => msg.request_id === 'again' && (msg.event === 'completed' || msg.event === 'error'))
    expect(done).toMatchObject({ event: 'completed', data: expect.stringContaining('first words') })
    await client.close()
  })

  it('resume - a marker whose CLI conversation is gone starts the conversation anew', async () => {
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'gone-1', prompt: 'old words' })
    await client.event('completed', 'gone-1')
    await stack.service.bus.request('agent-runtime.place', JSON.stringify({ type: 'close', session_id: 'gone-1' }), { timeoutMs: 5_000 })
    await rm(path.join(stack.dir, 'claude'), { recursive: true, force: true })
    client.send({ type: 'execute', session_id: 'gone-1', prompt: 'recall', request_id: 'fresh' })
    const done = await client.next((msg) => msg.request_id === 'fresh' && (msg.event === 'completed' || msg.event === 'error'))
    expect(done).toMatchObject({ event: 'completed' })
    expect(done.data).not.toContain('old words')
    await client.close()
  })
})
