/**
 * The sandbox check is applied again each time a session's CLI starts: an
 * agent that replaced its sandbox with a symlink (Bash can) between turns
 * must not get its next CLI started elsewhere.
 */
import { mkdir, realpath, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processesUnder } from '../fixtures/processes.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

describe('sandbox swap', () => {
  let stack: Stack
  let client: WsClient
  beforeAll(async () => {
    // A short idle timeout ends the CLI between turns: the next turn starts a new one.
    stack = await startStack({ engine: { idle_timeout: '500ms' } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client.close()
    await stack.close()
  })

  /** Runs a turn, then waits until the idle reap has ended the session's CLI. */
  async function turnThenIdle(sessionId: string): Promise<string> {
    client.send({ type: 'execute', session_id: sessionId, prompt: 'one' })
    await client.event('completed', sessionId)
    const sandbox = path.join(await realpath(path.join(stack.dir, 'sessions')), sessionId)
    await expect.poll(() => processesUnder(sandbox), { timeout: 5_000, interval: 100 }).toEqual([])
    return sandbox
  }

  it.each([
    ['outside the base', async () => path.join(stack.dir, 'outside')],
    ["to another session's sandbox", async () => path.join(await realpath(path.join(stack.dir, 'sessions')), 'victim')],
  ])('sandbox swap - a sandbox replaced by a symlink %s is refused on the next turn, and no CLI starts there', async (_, targetOf) => {
    const sessionId = `swap-${Math.random().toString(36).slice(2, 8)}`
    const sandbox = await turnThenIdle(sessionId)
    const target = await targetOf()
    await mkdir(target, { recursive: true })
    await rm(sandbox, { recursive: true })
    await symlink(target, sandbox)

    client.send({ type: 'execute', session_id: sessionId, prompt: 'two', request_id: `${sessionId}-2` })
    const error = await client.next((msg) => msg.event === 'error' && msg.session_id === sessionId, 10_000)
    expect(error).toMatchObject({ error: { code: 'WORK_DIR_REJECTED' } })
    expect(JSON.stringify(error)).not.toContain(stack.dir)
    expect(client.eventsOf(sessionId).filter((msg) => msg.event === 'completed')).toHaveLength(1)
    expect(await processesUnder(await realpath(target))).toEqual([])
  })
})
