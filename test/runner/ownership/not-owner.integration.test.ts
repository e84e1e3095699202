import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeReply, RUNNER_HEADER, subjects } from '../../../contract/mod.ts'
import { startRunnerStack, type RunnerStack } from '../../fixtures/runner.ts'

/** Two runners on one bus and one state: one owns a session, the other is asked about it. */
describe('not owner - between two runners', () => {
  let stack: RunnerStack

  beforeAll(async () => {
    stack = await startRunnerStack({ runnerIds: ['r0', 'r1'] })
  })
  afterAll(async () => {
    await stack.close()
  })

  const ask = (runner: string, command: Record<string, unknown>) =>
    stack.bus.request(subjects(stack.config.nats.prefix).runner(runner), JSON.stringify(command), { timeoutMs: 5_000 })

  it('not owner - the runner that does not own the session answers NOT_OWNER and names the owner in its reply header', async () => {
    const created = await ask('r0', { type: 'execute', session_id: 'held', turn_id: 't1', prompt: 'hello' })
    expect(created.headers?.[RUNNER_HEADER]).toBe('r0')
    const reply = await ask('r1', { type: 'stats', session_id: 'held' })
    expect(() => decodeReply('stats', reply.data)).toThrow(expect.objectContaining({ name: 'ServiceError', code: 'NOT_OWNER' }))
    expect(reply.headers?.[RUNNER_HEADER]).toBe('r0')
  })
})
