import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliSessionId } from '../../runner/cli-session.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

describe('session registry record', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack.close()
  })

  it('registry - owner, state, work_dir, CLI session id, LastActive and counters follow the session', async () => {
    const client = await WsClient.connect(stack.wsUrl)
    const before = Date.now()
    client.send({ type: 'execute', session_id: 'rec-1', prompt: 'tool: echo one', work_dir: 'proj' })
    await client.event('tool_use', 'rec-1')
    const busy = (await stack.service.state!.registry.get('rec-1'))!.value
    expect(busy).toMatchObject({ state: 'busy', turn_id: expect.stringMatching(/^turn_/) })
    await client.event('completed', 'rec-1')
    await client.close()
    const record = (await stack.service.state!.registry.get('rec-1'))!.value
    expect(record).toMatchObject({
      session_id: 'rec-1',
      owner: expect.any(String),
      state: 'idle',
      work_dir: path.join(await realpath(stack.config.session.work_dir), 'proj'),
      cli_session_id: cliSessionId('default', 'rec-1'),
      stats: { turns: 1, tool_calls: 1 },
    })
    expect(record.turn_id).toBeUndefined()
    expect(record.last_active).toBeGreaterThanOrEqual(before)
  })
})
