import { emptyStats, type Stats } from '../../contract/mod.ts'
import type { TurnResult } from '../engine/engine.ts'

/**
 * A turn's own counters from the CLI's result record. The CLI's cost is summed
 * over its conversation (and may restart at zero in a new process), so the
 * turn's cost is the rise since the last result, or the whole figure when it fell.
 */
export function turnStats(result: TurnResult, previousCumulativeCost: number, toolCalls: number): Stats {
  const cost = result.cumulativeCostUsd >= previousCumulativeCost ? result.cumulativeCostUsd - previousCumulativeCost : result.cumulativeCostUsd
  const stats: Stats = {
    ...emptyStats(),
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    cache_read_input_tokens: result.cacheReadInputTokens,
    cache_creation_input_tokens: result.cacheCreationInputTokens,
    total_cost_usd: Math.round(cost * 1e9) / 1e9,
    duration_ms: result.durationMs,
    duration_api_ms: result.durationApiMs,
    num_turns: result.numTurns,
    turns: 1,
    tool_calls: toolCalls,
    errors: result.isError ? 1 : 0,
  }
  if (result.model !== undefined) stats.model = result.model
  return stats
}
