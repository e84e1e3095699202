import { z } from 'zod'

/** Token, cost and time counters of a turn, or summed over a session. */
export const Stats = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_read_input_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  total_cost_usd: z.number(),
  duration_ms: z.number(),
  duration_api_ms: z.number(),
  /** Model round trips (the CLI's num_turns). */
  num_turns: z.number(),
  /** Completed execute requests. */
  turns: z.number(),
  tool_calls: z.number(),
  errors: z.number(),
  model: z.string().optional(),
})
export type Stats = z.output<typeof Stats>

export function emptyStats(): Stats {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    total_cost_usd: 0,
    duration_ms: 0,
    duration_api_ms: 0,
    num_turns: 0,
    turns: 0,
    tool_calls: 0,
    errors: 0,
  }
}

const SUMMED = [
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
  'total_cost_usd',
  'duration_ms',
  'duration_api_ms',
  'num_turns',
  'turns',
  'tool_calls',
  'errors',
] as const satisfies readonly (keyof Stats)[]

/** Adds a turn's counters to a session's; the latest model wins. */
export function addStats(total: Stats, turn: Stats): Stats {
  const sum = { ...total }
  for (const key of SUMMED) sum[key] = total[key] + turn[key]
  sum.total_cost_usd = Math.round(sum.total_cost_usd * 1e9) / 1e9
  if (turn.model) sum.model = turn.model
  return sum
}
