/**
 * What the WAF integration reports when it blocks a prompt or a tool call:
 * `RunnerObserver.dangerBlocked(block)` counts it in `service_dangers_blocked`
 * and records a `security.danger_block` span.
 */
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
  /** What was blocked, as the WAF's excerpt shows it (secrets masked, short): the span's `danger.operation`. */
  operation: string
}
