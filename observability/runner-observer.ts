import type { Logger } from 'pino'
import { ErrorCodes, isErrorCode, isTurnEnd } from '../contract/mod.ts'
import type { RunnerObserver } from '../runner/mod.ts'
import type { Metrics } from './metrics.ts'
import type { TurnSpans } from './turn-spans.ts'

export interface RunnerObserverDeps {
  metrics: Metrics
  /** Absent when tracing is off. */
  spans?: TurnSpans | undefined
  log: Logger
}

/** The runner's observer (runner/observer.ts): metrics, spans and the failed-turn log line from its commands, events and WAF blocks. */
export function createRunnerObserver({ metrics, spans, log }: RunnerObserverDeps): RunnerObserver {
  const guard = (what: string, fn: () => void) => {
    try {
      fn()
    } catch (err) {
      log.warn({ err, what }, 'observability hook failed')
    }
  }
  return {
    command: (command, headers) => {
      if (spans) guard('command', () => spans.command(command, headers))
    },
    commandFailed: (command, error) => {
      if (spans) guard('commandFailed', () => spans.commandFailed(command, error))
    },
    event: (event) => {
      guard('event', () => {
        if (event.event === 'tool_use') metrics.toolInvoked(event.tool.name)
        else if (event.event === 'permission_resolved') metrics.approvalSettled('permission', event.decision, event.source, event.waited_ms)
        else if (event.event === 'question_resolved') metrics.approvalSettled('question', event.answers ? 'answer' : 'reject', event.source, event.waited_ms)
        else if (event.event === 'error' && event.session_id !== undefined) {
          metrics.sessionError(event.error.code)
          // spec §6.3: error for an execution failure, warn for what the client can fix or retry.
          const failure = isErrorCode(event.error.code) && ErrorCodes[event.error.code].status >= 500
          const context = {
            session_id: event.session_id,
            turn_id: event.turn_id,
            code: event.error.code,
            err_message: event.error.message,
            tool: event.tool?.name,
          }
          log[failure ? 'error' : 'warn'](context, isTurnEnd(event) ? 'turn failed' : 'tool call refused')
        }
        spans?.event(event)
      })
    },
    dangerBlocked: (block) => {
      guard('dangerBlocked', () => {
        metrics.dangerBlocked(block.category)
        log.warn(
          { session_id: block.session_id, turn_id: block.turn_id, category: block.category, rule_id: block.rule_id, tool: block.tool_name },
          'WAF blocked an operation',
        )
        spans?.dangerBlocked(block)
      })
    },
  }
}
