import { describe, expect, it } from 'vitest'
import { costOf, turnResult, type TurnFacts } from '../../../../runner/engine/acp/turn.ts'

const facts = (end: TurnFacts['end'], more: Partial<TurnFacts> = {}): TurnFacts => ({
  end,
  cancelled: false,
  durationMs: 42,
  text: 'answer',
  cumulativeCostUsd: 0,
  ...more,
})

describe('acp turn - result', () => {
  it.each([
    {
      name: "end_turn with Gemini's _meta.quota (recorded)",
      facts: facts({ response: { stopReason: 'end_turn', _meta: { quota: { token_count: { input_tokens: 20, output_tokens: 50 } } } } }),
      expected: { isError: false, subtype: 'success', inputTokens: 20, outputTokens: 50, text: 'answer', durationMs: 42, numTurns: 1 },
    },
    {
      name: 'end_turn with the unstable usage (cache counts kept)',
      facts: facts({
        response: { stopReason: 'end_turn', usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10, cachedReadTokens: 2, cachedWriteTokens: 1 } },
      }),
      expected: { isError: false, inputTokens: 7, outputTokens: 3, cacheReadInputTokens: 2, cacheCreationInputTokens: 1 },
    },
    {
      name: 'end_turn without counts (claude-code-acp, codex-acp): zeros',
      facts: facts({ response: { stopReason: 'end_turn' } }),
      expected: { isError: false, inputTokens: 0, outputTokens: 0 },
    },
    {
      name: 'cancelled',
      facts: facts({ response: { stopReason: 'cancelled' } }, { cancelled: true }),
      expected: { isError: true, subtype: 'error_during_execution', errors: ['the turn was cancelled'] },
    },
    {
      name: 'cancelled by the runner although the agent said end_turn',
      facts: facts({ response: { stopReason: 'end_turn' } }, { cancelled: true }),
      expected: { isError: true, subtype: 'error_during_execution' },
    },
    {
      name: 'ended cancelled by the agent after the runner rejected a tool call (codex-acp aborts on reject): a completed turn',
      facts: facts({ response: { stopReason: 'cancelled' } }, { rejected: true }),
      expected: { isError: false, subtype: 'success', text: 'answer' },
    },
    {
      name: 'cancelled by the runner after a rejected tool call: still cancelled',
      facts: facts({ response: { stopReason: 'cancelled' } }, { cancelled: true, rejected: true }),
      expected: { isError: true, errors: ['the turn was cancelled'] },
    },
    {
      name: 'ended cancelled by the agent with nothing rejected: an error',
      facts: facts({ response: { stopReason: 'cancelled' } }),
      expected: { isError: true, errors: ['the turn was cancelled'] },
    },
    {
      name: 'max_turn_requests',
      facts: facts({ response: { stopReason: 'max_turn_requests' } }),
      expected: { isError: true, subtype: 'error_max_turns' },
    },
    {
      name: 'refusal',
      facts: facts({ response: { stopReason: 'refusal' } }),
      expected: { isError: true, subtype: 'error_during_execution', errors: ['the agent stopped: refusal'] },
    },
    {
      name: 'an error answer',
      facts: facts({ error: 'Internal error' }),
      expected: { isError: true, subtype: 'error_during_execution', errors: ['Internal error'] },
    },
    {
      name: 'a session that could not be loaded',
      facts: facts({ error: 'no session', conversationNotFound: true }),
      expected: { isError: true, conversationNotFound: true },
    },
    {
      name: 'the cost usage_update reported',
      facts: facts({ response: { stopReason: 'end_turn' } }, { cumulativeCostUsd: 0.25 }),
      expected: { cumulativeCostUsd: 0.25 },
    },
  ])('$name', ({ facts, expected }) => {
    expect(turnResult(facts)).toMatchObject(expected)
  })

  it('no conversationNotFound on an ordinary failure', () => {
    expect(turnResult(facts({ error: 'x' })).conversationNotFound).toBeUndefined()
  })

  it.each([
    { update: { sessionUpdate: 'usage_update', used: 35, size: 258400 }, cost: undefined },
    { update: { sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: 0.5, currency: 'USD' } }, cost: 0.5 },
    { update: { sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: 9, currency: 'credits' } }, cost: undefined },
  ])('usage_update cost $update.cost', ({ update, cost }) => {
    expect(costOf(update)).toBe(cost)
  })
})
