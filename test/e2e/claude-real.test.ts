import { readFile, realpath } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.ts'
import { claudeBin, claudeEnv, type ClaudeEnv } from '../fixtures/claude-env.ts'
import { processesUnder } from '../fixtures/processes.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

/** The whole service driving the REAL Claude Code CLI, which talks to a fake model API. */
describe('real Claude Code CLI through the service', () => {
  let api: FakeAnthropic
  let env: ClaudeEnv
  let stack: Stack
  let client: WsClient

  beforeAll(async () => {
    api = await startFakeAnthropic()
    env = claudeEnv({ baseUrl: api.url })
    stack = await startStack({ engine: { command: claudeBin, args: [], env: env.env, stop_grace: '2s' } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client?.close()
    await stack?.close()
    await api?.stop()
    env?.cleanup()
  })

  const sandboxOf = async (sessionId: string) => realpath(path.join(stack.config.session.work_dir, sessionId))
  const commandLine = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ')

  it('real CLI - a Bash tool round trip streams every event kind', async () => {
    client.send({ type: 'execute', request_id: 1, session_id: 'real-1', prompt: 'run: echo hi' })
    const completed = await client.event('completed', 'real-1', 60_000)
    const events = client.eventsOf('real-1')
    const kinds = events.map((msg) => msg.event)
    expect(kinds).toEqual(expect.arrayContaining(['thinking', 'tool_use', 'tool_result', 'answer', 'completed']))
    expect(kinds.indexOf('tool_use')).toBeLessThan(kinds.indexOf('tool_result'))
    expect(kinds.at(-1)).toBe('completed')
    const toolUse = events.find((msg) => msg.event === 'tool_use')!
    expect(toolUse.tool).toMatchObject({ name: 'Bash', input: { command: 'echo hi' } })
    expect(events.find((msg) => msg.event === 'tool_result')).toMatchObject({ data: 'hi', is_error: false })
    expect(events.filter((msg) => msg.event === 'answer').at(-1)!.data).toContain('Done. The tool said: hi')
    expect(completed).toMatchObject({ request_id: 1, session_id: 'real-1', stats: { turns: 1, tool_calls: 1 } })
    expect((completed.stats as { total_cost_usd: number }).total_cost_usd).toBeGreaterThan(0)
  })

  it('real CLI - token streaming: the answer_delta pieces arrive before the answer and make its text, the thinking_delta pieces its thinking', async () => {
    const prompt = 'run: echo streamed pieces of a longer answer'
    client.send({ type: 'execute', session_id: 'real-deltas', prompt })
    await client.event('completed', 'real-deltas', 60_000)
    const all = client.messages.filter((msg) => msg.session_id === 'real-deltas')
    const answers = all.filter((msg) => msg.event === 'answer')
    expect(answers.length).toBeGreaterThan(0)
    for (const answer of answers) {
      // The pieces of one block: those of its API message after the previous block's end.
      const at = all.indexOf(answer)
      const start = Math.max(...all.slice(0, at).map((msg, i) => (msg.event === 'answer' || msg.event === 'tool_use' ? i : -1)))
      const pieces = all.slice(start + 1, at).filter((msg) => msg.event === 'answer_delta')
      expect(pieces.length, JSON.stringify(answer)).toBeGreaterThan(1)
      expect(pieces.every((msg) => msg.message_id === answer.message_id && msg.seq === undefined)).toBe(true)
      expect(pieces.map((msg) => msg.data).join('')).toBe(answer.data)
    }
    const thinking = all.find((msg) => msg.event === 'thinking')!
    const thoughts = all.slice(0, all.indexOf(thinking)).filter((msg) => msg.event === 'thinking_delta')
    expect(thoughts.map((msg) => msg.data).join('')).toBe(thinking.data)
    // Only the stored events were numbered, 1, 2, 3 … without gaps.
    const seqs = all.filter((msg) => msg.seq !== undefined).map((msg) => msg.seq)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => (seqs[0] as number) + i))
  })

  it('real CLI - stop mid-turn ends the CLI and its tool command, which runs in a group of its own', async () => {
    client.send({ type: 'execute', session_id: 'real-stop', prompt: 'run: python3 -c "import time; time.sleep(120)"' })
    await client.event('tool_use', 'real-stop', 60_000)
    const sandbox = await sandboxOf('real-stop')
    await vi.waitFor(
      async () => {
        const lines = await Promise.all((await processesUnder(sandbox)).map(commandLine))
        expect(lines.some((line) => line.includes('time.sleep(120)'))).toBe(true)
      },
      { timeout: 20_000 },
    )
    client.send({ type: 'stop', session_id: 'real-stop', request_id: 'halt' })
    expect(await client.event('stopped', 'real-stop', 30_000)).toMatchObject({ request_id: 'halt' })
    expect(await processesUnder(sandbox)).toEqual([])
  })

  it('real CLI - after the CLI process is killed, the next execute resumes the conversation', async () => {
    client.send({ type: 'execute', session_id: 'real-resume', prompt: 'remember ALPHA', request_id: 'a' })
    await client.next((msg) => msg.request_id === 'a' && msg.event === 'completed', 60_000)
    const sandbox = await sandboxOf('real-resume')
    const cli = await processesUnder(sandbox)
    expect(cli.length).toBeGreaterThan(0)
    for (const pid of cli) process.kill(pid, 'SIGKILL')
    await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 10_000 })

    client.send({ type: 'execute', session_id: 'real-resume', prompt: 'recall', request_id: 'b' })
    const done = await client.next((msg) => msg.request_id === 'b' && (msg.event === 'completed' || msg.event === 'error'), 60_000)
    expect(done, JSON.stringify(done)).toMatchObject({ event: 'completed' })
    // The model saw the earlier prompt in the resumed conversation.
    const last = api.messageRequests().at(-1)!
    expect(JSON.stringify(last.body.messages)).toContain('remember ALPHA')
    expect(done.data).toContain('remember ALPHA')
  })
})
