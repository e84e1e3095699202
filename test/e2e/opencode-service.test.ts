import { existsSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { requireBwrap } from '../fixtures/escape-corpus.ts'
import { processesUnder } from '../fixtures/processes.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { opencodeRow } from './engines/opencode.ts'
import type { EngineFixture } from './engines/row.ts'

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')

/**
 * The OpenCode engine through the service (WebSocket client, the WAF on, the
 * bubblewrap session sandbox with its network allowlist, a HOME per session),
 * the real OpenCode CLI against the fake Chat Completions API: the four
 * scenarios of the conformance suite.
 */
describe('opencode engine - through the service, sandboxed', () => {
  requireBwrap()
  let fixture: EngineFixture
  let stack: Stack
  let client: WsClient

  beforeAll(async () => {
    fixture = await opencodeRow.setup()
    const { HOME: _home, ...env } = fixture.config.env ?? {}
    stack = await startStack({ engines: [{ ...fixture.config, env }], engine: { default: 'opencode', stop_grace: '2s' }, sandbox: { mode: 'bwrap' } })
    client = await WsClient.connect(stack.wsUrl)
  }, 60_000)
  afterAll(async () => {
    await client?.close()
    await stack?.close()
    await fixture?.stop()
  })

  const sandboxOf = async (sessionId: string) => realpath(path.join(stack.config.session.work_dir, sessionId))
  const finished = (requestId: string) => client.next((msg) => msg.request_id === requestId && (msg.event === 'completed' || (msg.event === 'error' && msg.tool === undefined)), 120_000)

  it('tool round trip - thinking, tool_use, tool_result, answer, completed with stats', async () => {
    client.send({ type: 'execute', request_id: 'r', session_id: 'oc-round-trip', prompt: 'run: echo conformance-ok' })
    const end = await finished('r')
    const events = client.eventsOf('oc-round-trip')
    expect(end.event, JSON.stringify(events.slice(-3))).toBe('completed')
    const kinds = events.map((e) => e.event)
    for (const kind of ['thinking', 'tool_use', 'tool_result', 'answer']) expect(kinds).toContain(kind)
    expect(kinds.indexOf('tool_use')).toBeLessThan(kinds.indexOf('tool_result'))
    expect(events.find((e) => e.event === 'tool_use')).toMatchObject({ tool: { name: 'bash', input: { command: 'echo conformance-ok' } } })
    expect(events.find((e) => e.event === 'tool_result')?.data).toContain('conformance-ok')
    expect(events.filter((e) => e.event === 'answer').at(-1)?.data).toBe('Done. The tool said: conformance-ok\n')
    expect(end).toMatchObject({ turn_stats: { tool_calls: 1, input_tokens: expect.any(Number), output_tokens: expect.any(Number) } })
    const stats = end.turn_stats as { input_tokens: number; output_tokens: number }
    expect(stats.input_tokens).toBeGreaterThan(0)
    expect(stats.output_tokens).toBeGreaterThan(0)
  })

  it('stop mid-tool - the turn ends and no process of the session is left', async () => {
    client.send({ type: 'execute', session_id: 'oc-stop', prompt: 'run: python3 -c "import time; time.sleep(30)"' })
    await client.event('tool_use', 'oc-stop', 120_000)
    const sandbox = await sandboxOf('oc-stop')
    client.send({ type: 'stop', session_id: 'oc-stop', request_id: 'halt' })
    expect(await client.event('stopped', 'oc-stop', 30_000)).toMatchObject({ request_id: 'halt' })
    expect(await processesUnder(sandbox)).toEqual([])
  })

  it('resume after the CLI is killed - SIGKILL mid-turn, then recall lists the earlier prompt', async () => {
    client.send({ type: 'execute', session_id: 'oc-resume', prompt: 'remember ALPHA', request_id: 'a' })
    expect(await finished('a')).toMatchObject({ event: 'completed' })
    client.send({ type: 'execute', session_id: 'oc-resume', prompt: 'run: python3 -c "import time; time.sleep(30)"', request_id: 'k' })
    await client.next((msg) => msg.session_id === 'oc-resume' && msg.event === 'tool_use', 120_000)
    const sandbox = await sandboxOf('oc-resume')
    const cli = await processesUnder(sandbox)
    expect(cli.length).toBeGreaterThan(0)
    for (const pid of cli) process.kill(pid, 'SIGKILL')
    await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 10_000 })
    await finished('k')

    client.send({ type: 'execute', session_id: 'oc-resume', prompt: 'recall', request_id: 'b' })
    const done = await finished('b')
    expect(done, JSON.stringify(done)).toMatchObject({ event: 'completed' })
    expect(client.eventsOf('oc-resume').filter((e) => e.event === 'answer').at(-1)?.data).toMatch(/^Earlier prompts: remember ALPHA/)
  })

  it('WAF - rm -rf / written by the model: WAF_BLOCKED with the tool, nothing ran, the model is told', async () => {
    const canary = path.join(stack.config.session.work_dir, 'oc-waf', 'CANARY')
    const command = `touch ${canary}; exit 0; rm -rf /`
    client.send({ type: 'execute', request_id: 'w', session_id: 'oc-waf', prompt: `run-b64: ${b64(command)}` })
    await finished('w')
    const events = client.eventsOf('oc-waf')
    expect(events.find((e) => e.event === 'error')).toMatchObject({ error: { code: 'WAF_BLOCKED' }, tool: { name: 'Bash', input: { command } } })
    expect(existsSync(canary)).toBe(false)
    expect(fixture.modelSaw('blocked by WAF rule fs.rm-root')).toBe(true)
  })
})
