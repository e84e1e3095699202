import { describe, expect, it } from 'vitest'
import type { TurnResult } from '../../../runner/engine/engine.ts'
import { turnStats } from '../../../runner/session/turn-stats.ts'

const result = (cumulativeCostUsd: number, extra: Partial<TurnResult> = {}): TurnResult => ({
  isError: false,
  subtype: 'success',
  text: 'ok',
  durationMs: 100,
  durationApiMs: 80,
  numTurns: 2,
  cumulativeCostUsd,
  inputTokens: 24,
  outputTokens: 84,
  cacheReadInputTokens: 5,
  cacheCreationInputTokens: 7,
  model: 'claude-x',
  ...extra,
})

describe('turn stats', () => {
  it.each([
    ['the first turn costs the whole figure', 0.0009, 0, 0.0009],
    ['a later turn costs the rise', 0.0027, 0.0009, 0.0018],
    ['a new process that restarted at zero costs its figure', 0.0004, 0.0027, 0.0004],
  ])('stats - %s', (_name, cumulative, previous, expected) => {
    expect(turnStats(result(cumulative), previous, 0).total_cost_usd).toBeCloseTo(expected, 9)
  })

  it('stats - copies tokens, durations, tool calls and model', () => {
    expect(turnStats(result(0.001), 0, 3)).toEqual({
      input_tokens: 24,
      output_tokens: 84,
      cache_read_input_tokens: 5,
      cache_creation_input_tokens: 7,
      total_cost_usd: 0.001,
      duration_ms: 100,
      duration_api_ms: 80,
      num_turns: 2,
      turns: 1,
      tool_calls: 3,
      errors: 0,
      model: 'claude-x',
    })
  })

  it('stats - a failed turn counts an error', () => {
    expect(turnStats(result(0, { isError: true }), 0, 0).errors).toBe(1)
  })
})
