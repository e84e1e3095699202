import type { Headers } from '../bus/mod.ts'
import type { Command, ErrorBody, ServiceEvent } from '../contract/mod.ts'
import type { BlockedTool, WafMatch } from '../waf/mod.ts'

/**
 * What the runner reports (observability implements it: metrics, traces, the
 * failed-turn log line): each command it takes, with the bus message's
 * headers (they carry the trace context), each command it refuses, each event
 * it publishes, and each WAF block. Calls must not throw.
 */
export interface RunnerObserver {
  command(command: Command, headers: Headers | undefined): void
  commandFailed(command: Command, error: ErrorBody): void
  event(event: ServiceEvent): void
  /** The WAF blocked a prompt or a tool call. */
  dangerBlocked(block: DangerBlock): void
}

/** A prompt or tool call the WAF blocked, as the runner reports it. */
export interface DangerBlock {
  session_id: string
  /** The turn it stopped; when absent, the session's running turn. */
  turn_id?: string | undefined
  /** The tool call it stopped; absent for a prompt. */
  tool_id?: string | undefined
  tool_name?: string | undefined
  /** The matched rule's category (the metric's label), e.g. `filesystem`. */
  category: string
  rule_id?: string | undefined
  /** What was blocked, as the WAF's excerpt shows it (secrets masked, short). */
  operation: string
}

/** The report of one WAF block (waf/guard.ts calls its listener with these). */
export function dangerBlock(match: WafMatch, sessionId: string, tool?: BlockedTool): DangerBlock {
  return {
    session_id: sessionId,
    category: match.category,
    rule_id: match.rule_id,
    operation: match.excerpt,
    tool_id: tool?.id,
    tool_name: tool?.name,
  }
}
