import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { decodeReply, subjects, type Command } from '../../contract/mod.ts'
import { lateBy } from '../../runner/deadline.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'

/** Issue 16, finding 4: a command the gateway gave up on (and told its client so) is never carried out later. */
describe('command deadlines', () => {
  it.each([
    [{ type: 'execute', session_id: 's', turn_id: 't', prompt: 'p' }, 0],
    [{ type: 'execute', session_id: 's', turn_id: 't', prompt: 'p', deadline: Date.now() + 60_000 }, 0],
    [{ type: 'stop', session_id: 's', deadline: Date.now() - 5_000 }, 5_000],
    [{ type: 'version' }, 0],
  ] as [Command, number][])('lateBy - %j', (command, late) => {
    expect(lateBy(command)).toBeGreaterThanOrEqual(late)
    expect(lateBy(command)).toBeLessThan(late + 1_000)
  })

  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack.close()
  })

  const place = (command: Command) => stack.service.bus.request(subjects(stack.config.nats.prefix).place, JSON.stringify(command), { timeoutMs: 5_000 })

  it('deadline - an execute that reaches a runner after its deadline is answered RUNNER_TIMEOUT and runs nothing', async () => {
    const reply = await place({ type: 'execute', session_id: 'late-1', turn_id: 'turn-late', prompt: 'must not run', deadline: Date.now() - 1 })
    expect(() => decodeReply('execute', reply.data)).toThrow(expect.objectContaining({ code: 'RUNNER_TIMEOUT' }))
    // Nothing was claimed, queued or published for it.
    expect(await stack.service.state!.registry.get('late-1')).toBeUndefined()
    expect(await stack.service.state!.events.read('late-1', 0)).toEqual([])
  })

  it('deadline - the same execute within its deadline runs', async () => {
    const reply = await place({ type: 'execute', session_id: 'late-2', turn_id: 'turn-ok', prompt: 'may run', deadline: Date.now() + 10_000 })
    expect(decodeReply('execute', reply.data)).toMatchObject({ turn_id: 'turn-ok' })
    await vi.waitFor(async () => expect((await stack.service.state!.events.read('late-2', 0)).map((event) => event.event)).toContain('completed'), {
      timeout: 10_000,
    })
  })

  it('deadline - a stop that comes too late stops nothing', async () => {
    await place({ type: 'execute', session_id: 'late-3', turn_id: 'turn-sleep', prompt: 'sleep: 2', deadline: Date.now() + 10_000 })
    const reply = await place({ type: 'stop', session_id: 'late-3', deadline: Date.now() - 1 })
    expect(() => decodeReply('stop', reply.data)).toThrow(expect.objectContaining({ code: 'RUNNER_TIMEOUT' }))
    await vi.waitFor(async () => expect((await stack.service.state!.events.read('late-3', 0)).map((event) => event.event)).toContain('completed'), {
      timeout: 10_000,
    })
    expect((await stack.service.state!.events.read('late-3', 0)).map((event) => event.event)).not.toContain('stopped')
  })
})
