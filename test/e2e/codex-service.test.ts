import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { codexRow } from './engines/codex.ts'
import type { EngineFixture } from './engines/row.ts'

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')

/**
 * The Codex engine through the service (WebSocket client, the WAF on), the
 * real Codex CLI against the fake Responses API; the CLI's HOME is the
 * per-session one. Unsandboxed: under the bubblewrap session sandbox the first
 * turn does not complete yet (open: see the Codex helper's report).
 */
describe('codex engine - through the service', () => {
  let fixture: EngineFixture
  let stack: Stack
  let client: WsClient

  beforeAll(async () => {
    fixture = await codexRow.setup()
    const { HOME: _home, ...env } = fixture.config.env ?? {}
    stack = await startStack({ engines: [{ ...fixture.config, env }], engine: { default: 'codex', stop_grace: '2s' }, sandbox: { mode: 'none' } })
    client = await WsClient.connect(stack.wsUrl)
  }, 60_000)
  afterAll(async () => {
    await client?.close()
    await stack?.close()
    await fixture?.stop()
  })

  it('tool round trip - thinking, tool_use, tool_result, answer, completed with stats', async () => {
    client.send({ type: 'execute', request_id: 'r', session_id: 'codex-round-trip', prompt: 'run: echo conformance-ok' })
    const end = await client.next((msg) => msg.request_id === 'r' && (msg.event === 'completed' || msg.event === 'error'), 60_000)
    const events = client.eventsOf('codex-round-trip')
    expect(end.event, JSON.stringify(events.slice(-3))).toBe('completed')
    const kinds = events.map((e) => e.event)
    for (const kind of ['thinking', 'tool_use', 'tool_result', 'answer']) expect(kinds).toContain(kind)
    expect(events.find((e) => e.event === 'tool_use')).toMatchObject({ tool: { name: 'Bash', input: { command: 'echo conformance-ok' } } })
    expect(events.find((e) => e.event === 'tool_result')?.data).toContain('conformance-ok')
    expect(events.filter((e) => e.event === 'answer').at(-1)?.data).toMatch(/^Done\. The tool said: /)
  })

  it('WAF - rm -rf / written by the model: WAF_BLOCKED with the tool, nothing ran, the model is told', async () => {
    const canary = path.join(stack.config.session.work_dir, 'codex-waf', 'CANARY')
    const command = `touch ${canary}; exit 0; rm -rf /`
    client.send({ type: 'execute', request_id: 'w', session_id: 'codex-waf', prompt: `run-b64: ${b64(command)}` })
    await client.next((msg) => msg.request_id === 'w' && (msg.event === 'completed' || (msg.event === 'error' && msg.tool === undefined)), 60_000)
    const events = client.eventsOf('codex-waf')
    expect(events.find((e) => e.event === 'error')).toMatchObject({ error: { code: 'WAF_BLOCKED' }, tool: { name: 'Bash', input: { command } } })
    expect(existsSync(canary)).toBe(false)
    expect(fixture.modelSaw('blocked by WAF rule fs.rm-root')).toBe(true)
  })
})
