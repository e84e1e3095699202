import type { Headers } from '../bus/mod.ts'
import { isTurnEnd, type Command, type ErrorBody, type ServiceEvent } from '../contract/mod.ts'
import type { DangerBlock } from '../runner/mod.ts'
import type { SpanHandle, Tracing } from './spans.ts'

interface OpenTurn {
  span: SpanHandle
  sessionId: string
  /** Open `tool.use` spans by tool call id. */
  tools: Map<string, SpanHandle>
  /** Open `permission.wait` spans by permission request or question id. */
  waits: Map<string, SpanHandle>
}

/**
 * The runner's spans (spec §6.3), built from what the runner already sees:
 * `session.execute` from an execute command (its parent the gateway's span,
 * from the bus headers) to the event that ends the turn; `tool.use` from a
 * `tool_use` event to its `tool_result`; `security.danger_block` when the WAF
 * blocks something; `permission.wait` from a `permission_request` or
 * `question` to its settling (`permission.decision`, `permission.source`). Attributes: `session.id`, `namespace`, `tool.name`,
 * `tool.id`, `danger.operation`.
 */
export class TurnSpans {
  readonly #tracing: Tracing
  readonly #namespace: string
  readonly #turns = new Map<string, OpenTurn>()
  /** The turn each session runs now (after its `turn_started`), to place WAF blocks that name no turn. */
  readonly #running = new Map<string, string>()

  constructor(tracing: Tracing, namespace: string) {
    this.#tracing = tracing
    this.#namespace = namespace
  }

  /** A command reached the runner; `headers` are the bus message's. */
  command(command: Command, headers: Headers | undefined): void {
    if (command.type !== 'execute') return
    const span = this.#tracing.startSpan('session.execute', {
      kind: 'consumer',
      attributes: { 'session.id': command.session_id, namespace: this.#namespace, 'turn.id': command.turn_id },
      parent: headers,
    })
    this.#turns.set(command.turn_id, { span, sessionId: command.session_id, tools: new Map(), waits: new Map() })
  }

  /** The runner refused the command (queue full, bad work_dir, …): an execute's turn never started. */
  commandFailed(command: Command, error: ErrorBody): void {
    if (command.type !== 'execute') return
    const turn = this.#turns.get(command.turn_id)
    if (!turn) return
    turn.span.fail(error.code, error.message)
    this.#end(command.turn_id, turn)
  }

  /** Every event the runner publishes. */
  event(event: ServiceEvent): void {
    const turnId = event.turn_id
    if (turnId === undefined) return
    const turn = this.#turns.get(turnId)
    if (!turn) return
    switch (event.event) {
      case 'turn_started':
        this.#running.set(turn.sessionId, turnId)
        return
      case 'tool_use': {
        const span = this.#tracing.startSpan('tool.use', {
          attributes: { 'session.id': turn.sessionId, namespace: this.#namespace, 'tool.name': event.tool.name, 'tool.id': event.tool.id },
          parent: turn.span,
        })
        turn.tools.set(event.tool.id, span)
        return
      }
      case 'permission_request':
      case 'question': {
        const id = event.event === 'question' ? event.question.id : event.permission.id
        const tool = event.event === 'permission_request' ? event.permission.tool : undefined
        const attributes: Record<string, string> = {
          'session.id': turn.sessionId,
          namespace: this.#namespace,
          'permission.kind': event.event === 'question' ? 'question' : 'permission',
        }
        if (tool) attributes['tool.name'] = tool.name
        const parent = (tool?.id !== undefined ? turn.tools.get(tool.id) : undefined) ?? turn.span
        turn.waits.set(id, this.#tracing.startSpan('permission.wait', { attributes, parent }))
        return
      }
      case 'permission_resolved':
      case 'question_resolved': {
        const id = event.event === 'question_resolved' ? event.question_id : event.permission_id
        const span = turn.waits.get(id)
        if (!span) return
        const decision = event.event === 'permission_resolved' ? event.decision : event.answers ? 'answer' : 'reject'
        span.setAttributes({ 'permission.decision': decision, 'permission.source': event.source })
        span.end()
        turn.waits.delete(id)
        return
      }
      case 'tool_result': {
        const span = turn.tools.get(event.tool.id)
        if (!span) return
        if (event.is_error) span.fail('TOOL_ERROR', event.data.slice(0, 200))
        span.end()
        turn.tools.delete(event.tool.id)
        return
      }
    }
    if (event.event === 'error' && event.tool !== undefined) {
      // A denied tool call: its span fails, the turn goes on.
      if (event.tool.id !== undefined) turn.tools.get(event.tool.id)?.fail(event.error.code, event.error.message)
      return
    }
    if (!isTurnEnd(event)) return
    if (event.event === 'error') turn.span.fail(event.error.code, event.error.message)
    turn.span.setAttributes({ 'turn.end': event.event })
    this.#end(turnId, turn)
  }

  /** A WAF block: a span under the tool call or turn it stopped (else a root span). */
  dangerBlocked(block: DangerBlock): void {
    const turnId = block.turn_id ?? this.#running.get(block.session_id)
    const turn = turnId === undefined ? undefined : this.#turns.get(turnId)
    const parent = (block.tool_id !== undefined ? turn?.tools.get(block.tool_id) : undefined) ?? turn?.span
    const attributes: Record<string, string> = {
      'session.id': block.session_id,
      namespace: this.#namespace,
      'danger.operation': block.operation,
      'danger.category': block.category,
    }
    if (block.rule_id !== undefined) attributes['danger.rule'] = block.rule_id
    if (block.tool_name !== undefined) attributes['tool.name'] = block.tool_name
    if (block.tool_id !== undefined) attributes['tool.id'] = block.tool_id
    this.#tracing.startSpan('security.danger_block', { attributes, parent }).end()
  }

  /** Ends every open span (the service stops), so they are exported with the rest. */
  endAll(): void {
    for (const [turnId, turn] of this.#turns) {
      turn.span.setAttributes({ 'turn.end': 'shutdown' })
      this.#end(turnId, turn)
    }
  }

  /** Spans still open; for tests. */
  get openTurns(): number {
    return this.#turns.size
  }

  #end(turnId: string, turn: OpenTurn): void {
    for (const tool of turn.tools.values()) tool.end()
    for (const wait of turn.waits.values()) wait.end()
    turn.span.end()
    this.#turns.delete(turnId)
    if (this.#running.get(turn.sessionId) === turnId) this.#running.delete(turn.sessionId)
  }
}
