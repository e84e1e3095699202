import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RunnerClient } from '../../../gateway/runner-client.ts'
import { SessionHub } from '../../../gateway/session-hub.ts'
import { MAX_ANSWER_BYTES } from '../../../gateway/turns/answer-text.ts'
import { runTurn } from '../../../gateway/turns/follow.ts'
import { startRunnerStack, type RunnerStack } from '../../fixtures/runner.ts'

/** runTurn (the chat adapter's turn) keeps the answer, bounded, and never the turn's events (issue 16). */
describe('runTurn', () => {
  const log = pino({ level: 'silent' })
  let stack: RunnerStack
  let deps: { runners: RunnerClient; hub: SessionHub }

  beforeAll(async () => {
    stack = await startRunnerStack()
    const { config, bus, state } = stack
    deps = { runners: new RunnerClient(bus, config.nats.prefix, 10_000, state.registry), hub: new SessionHub(bus, config.nats.prefix, log, state.events) }
  })
  afterAll(async () => {
    await stack.close()
  })

  it('turn - the outcome is the answer and how it ended, not the events', async () => {
    let seen = 0
    const outcome = await runTurn(deps, { session_id: 't1', prompt: 'burst: 2000' }, () => seen++)
    expect(outcome.end).toBe('completed')
    expect(seen).toBeGreaterThan(2000)
    expect(Object.keys(outcome).sort()).toEqual(['answer', 'end', 'session_id', 'stats', 'turn_id'])
    expect(outcome.answer.split('\n\n')).toHaveLength(2000)
  })

  it(`turn - answer text past ${MAX_ANSWER_BYTES} bytes is left out and marked truncated`, async () => {
    const outcome = await runTurn(deps, { session_id: 't2', prompt: `big: ${MAX_ANSWER_BYTES + 1000}` })
    expect(outcome.end).toBe('completed')
    expect(outcome.truncated).toBe(true)
    expect(Buffer.byteLength(outcome.answer)).toBeLessThanOrEqual(MAX_ANSWER_BYTES)
  })
})
