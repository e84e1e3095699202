/**
 * The end of an ACP prompt turn as a TurnResult. Pure. Token counts come from
 * what the agent reports, whichever way it does (all three are optional):
 * - the prompt response's `usage` (unstable ACP: inputTokens, outputTokens,
 *   cachedReadTokens, cachedWriteTokens);
 * - its `_meta.quota.token_count` (gemini --acp: input_tokens, output_tokens);
 * - `usage_update` notifications during the turn: `cost.amount` is the
 *   session's cumulative cost (USD only); `used` is the context size, not a
 *   count of the turn's tokens, so it is left out.
 */
import type { TurnResult } from '../engine.ts'

type Obj = Record<string, unknown>

/** How the turn ended: the prompt's answer, or an error answer (or the agent going away). */
export type TurnEnd = { response: unknown } | { error: string; conversationNotFound?: boolean }

export interface TurnFacts {
  end: TurnEnd
  /** Whether the runner cancelled the turn (`session/cancel`). */
  cancelled: boolean
  /** Whether the runner rejected a tool call of the turn (the WAF or a person). */
  rejected?: boolean
  durationMs: number
  /** The answer's text, as the mapper saw it. */
  text: string
  /** The last cumulative cost in USD a `usage_update` reported, 0 when none. */
  cumulativeCostUsd: number
  model?: string | undefined
}

/** The TurnResult of one prompt turn. */
export function turnResult(facts: TurnFacts): TurnResult {
  const base: TurnResult = {
    isError: false,
    subtype: 'success',
    text: facts.text,
    durationMs: facts.durationMs,
    durationApiMs: 0,
    numTurns: 1,
    cumulativeCostUsd: facts.cumulativeCostUsd,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    ...(facts.model !== undefined && { model: facts.model }),
  }
  if ('error' in facts.end) {
    return {
      ...base,
      isError: true,
      subtype: 'error_during_execution',
      errors: [facts.end.error],
      ...(facts.end.conversationNotFound === true && { conversationNotFound: true as const }),
    }
  }
  const response = isObj(facts.end.response) ? facts.end.response : {}
  const result = { ...base, ...tokensOf(response) }
  const stop = response.stopReason
  if (stop === 'end_turn' && !facts.cancelled) return result
  // codex-acp's one reject option is `abort`, which ends the turn `cancelled`: it ended as the runner answered, it did not fail.
  if (stop === 'cancelled' && !facts.cancelled && facts.rejected === true) return result
  if (stop === 'max_turn_requests' || stop === 'max_tokens')
    return { ...result, isError: true, subtype: 'error_max_turns', errors: [`the agent stopped: ${stop}`] }
  const why = stop === 'cancelled' || facts.cancelled ? 'the turn was cancelled' : `the agent stopped: ${String(stop)}`
  return { ...result, isError: true, subtype: 'error_during_execution', errors: [why] }
}

/** The cumulative cost in USD a `usage_update` carries; undefined when it has none (or in another currency). */
export function costOf(update: Obj): number | undefined {
  const cost = update.cost
  if (!isObj(cost) || typeof cost.amount !== 'number') return undefined
  return cost.currency === undefined || cost.currency === 'USD' ? cost.amount : undefined
}

function tokensOf(response: Obj): Pick<TurnResult, 'inputTokens' | 'outputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'> {
  const usage = isObj(response.usage) ? response.usage : undefined
  if (usage) {
    return {
      inputTokens: num(usage.inputTokens),
      outputTokens: num(usage.outputTokens),
      cacheReadInputTokens: num(usage.cachedReadTokens),
      cacheCreationInputTokens: num(usage.cachedWriteTokens),
    }
  }
  const meta = isObj(response._meta) ? response._meta : {}
  const quota = isObj(meta.quota) && isObj(meta.quota.token_count) ? meta.quota.token_count : {}
  return { inputTokens: num(quota.input_tokens), outputTokens: num(quota.output_tokens), cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
