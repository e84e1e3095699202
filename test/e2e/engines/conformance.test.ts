import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processesUnder } from '../../fixtures/processes.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'
import { ENGINE_ROWS } from './rows.ts'
import type { EngineFixture } from './row.ts'

/**
 * The engine conformance suite: every engine adapter runs the same scenarios,
 * with the same assertions, against its real CLI and a fake of its model API
 * (test/fakes/model-script.ts decides what the model says). Adding an engine
 * means adding a row (rows.ts). The service runs as users run it: dev mode,
 * the bubblewrap sandbox, the WAF on.
 */

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')
const kinds = (events: Record<string, unknown>[]) => events.map((event) => event.event)
const isEnd = (msg: Record<string, unknown>) => msg.event === 'completed' || msg.event === 'stopped' || (msg.event === 'error' && msg.tool === undefined)
/** How a turn ended, with its error when it failed (what a failed assertion should show). */
const ending = (end: Record<string, unknown>) => ({ event: end.event, error: end.error })
const COMPLETED = { event: 'completed', error: undefined }
/** What a turn of a real CLI may take here, its first start included. */
const TURN_MS = 90_000

describe.each(ENGINE_ROWS)('engine conformance - $name', (row) => {
  let fixture: EngineFixture
  let stack: Stack
  let client: WsClient

  beforeAll(async () => {
    fixture = await row.setup()
    stack = await startStack({ engine: { default: row.name, stop_grace: '2s' }, engines: [fixture.config] })
    client = await WsClient.connect(stack.wsUrl)
  }, 120_000)
  afterAll(async () => {
    await client?.close()
    await stack?.close()
    await fixture?.stop()
  })

  const sandboxOf = (sessionId: string) => path.join(stack.config.session.work_dir, sessionId)
  async function turn(sessionId: string, requestId: string, prompt: string) {
    client.send({ type: 'execute', request_id: requestId, session_id: sessionId, prompt })
    const end = await client.next((msg) => msg.request_id === requestId && isEnd(msg), TURN_MS)
    const events = client.eventsOf(sessionId).filter((event) => event.request_id === requestId)
    return { end, events }
  }

  it(`${row.name} - a tool round trip: tool_use, tool_result, the answer, completed with the CLI's stats`, async () => {
    const { end, events } = await turn(`${row.name}-tool`, 'tool', 'run: echo conformance-ok')
    expect(ending(end)).toEqual(COMPLETED)
    const toolUse = events.find((event) => event.event === 'tool_use')
    expect(JSON.stringify((toolUse?.tool as { input?: unknown } | undefined)?.input)).toContain('echo conformance-ok')
    const result = events.find((event) => event.event === 'tool_result')
    expect(result).toMatchObject({ tool: { id: (toolUse!.tool as { id: string }).id } })
    if (row.shows.toolOutput) expect(String(result!.data)).toContain('conformance-ok')
    if (row.shows.thinking) expect(kinds(events)).toContain('thinking')
    const answers = events.filter((event) => event.event === 'answer').map((event) => String(event.data))
    expect(answers.join('\n')).toContain('Done. The tool said:')
    // The order a client can rely on: the call, its result, then the answer that read it.
    expect(kinds(events).indexOf('tool_use')).toBeLessThan(kinds(events).indexOf('tool_result'))
    expect(kinds(events).lastIndexOf('answer')).toBeGreaterThan(kinds(events).indexOf('tool_result'))
    const stats = end.turn_stats as Record<string, number>
    if (row.shows.tokens !== false) {
      expect(stats.input_tokens).toBeGreaterThan(0)
      expect(stats.output_tokens).toBeGreaterThan(0)
    } else expect([stats.input_tokens, stats.output_tokens]).toEqual([0, 0])
    expect(stats.tool_calls).toBe(1)
    expect(stats.turns).toBe(1)
    if (row.shows.cost) expect(stats.total_cost_usd).toBeGreaterThan(0)
    else expect(stats.total_cost_usd).toBe(0)
  })

  it(`${row.name} - stop mid-tool ends the turn, and no process of the session is left`, async () => {
    const sessionId = `${row.name}-stop`
    client.send({ type: 'execute', request_id: 'long', session_id: sessionId, prompt: 'run: python3 -c "import time; time.sleep(30)"' })
    await client.next((msg) => msg.request_id === 'long' && msg.event === 'tool_use', TURN_MS)
    // The tool command runs now (or is about to): stop it there.
    await expect.poll(() => processesUnder(sandboxOf(sessionId)), { timeout: 10_000 }).not.toEqual([])
    client.send({ type: 'stop', request_id: 'stop', session_id: sessionId })
    await client.next((msg) => msg.session_id === sessionId && msg.event === 'stopped', 30_000)
    expect(await processesUnder(sandboxOf(sessionId))).toEqual([])
  })

  it(`${row.name} - after its CLI is killed mid-turn, the next turn resumes the conversation from the CLI's own store`, async () => {
    const sessionId = `${row.name}-resume`
    expect(ending((await turn(sessionId, 'first', 'remember the word heliotrope')).end)).toEqual(COMPLETED)
    // Killed while it works (a CLI that runs a process per turn has none between turns).
    client.send({ type: 'execute', request_id: 'killed', session_id: sessionId, prompt: 'slow: 8000' })
    // Mid-turn: the model has the prompt and takes its time to answer.
    await expect.poll(() => fixture.modelSaw('slow: 8000'), { timeout: TURN_MS }).toBe(true)
    for (const pid of await processesUnder(sandboxOf(sessionId))) process.kill(pid, 'SIGKILL')
    // The killed turn ends either way: ENGINE_EXITED, or run again in a new process when the CLI had not answered it yet.
    await client.next((msg) => msg.request_id === 'killed' && isEnd(msg), TURN_MS)
    const { end, events } = await turn(sessionId, 'recall', 'recall')
    expect(ending(end)).toEqual(COMPLETED)
    const answer = events
      .filter((event) => event.event === 'answer')
      .map((event) => String(event.data))
      .join('\n')
    if (row.shows.resumes !== false) expect(answer).toContain('remember the word heliotrope')
    else expect(answer).not.toContain('remember the word heliotrope')
  })

  it(`${row.name} - the WAF denies a dangerous tool call the model writes, before it runs`, async () => {
    const sessionId = `${row.name}-waf`
    const canary = path.join(sandboxOf(sessionId), 'canary')
    const command = `touch ${canary}; exit 0; rm -rf /`
    const { events } = await turn(sessionId, 'waf', `run-b64: ${b64(command)}`)
    expect(events.find((event) => event.event === 'error' && event.tool !== undefined)).toMatchObject({
      error: { code: 'WAF_BLOCKED' },
      waf: { rule_id: 'fs.rm-root' },
    })
    expect(existsSync(canary)).toBe(false)
    if (row.shows.denyReason !== false) expect(fixture.modelSaw('fs.rm-root')).toBe(true)
  })
})
