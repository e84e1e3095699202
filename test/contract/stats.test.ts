import { describe, expect, it } from 'vitest'
import { addStats, emptyStats } from '../../contract/mod.ts'

describe('stats', () => {
  it('stats - sums every counter and keeps the latest model', () => {
    const a = { ...emptyStats(), input_tokens: 1, output_tokens: 2, total_cost_usd: 0.1, turns: 1, tool_calls: 2, model: 'm1' }
    const b = { ...emptyStats(), input_tokens: 10, output_tokens: 20, total_cost_usd: 0.2, turns: 1, errors: 1, model: 'm2' }
    expect(addStats(a, b)).toEqual({
      ...emptyStats(),
      input_tokens: 11,
      output_tokens: 22,
      total_cost_usd: 0.3,
      turns: 2,
      tool_calls: 2,
      errors: 1,
      model: 'm2',
    })
  })
})
