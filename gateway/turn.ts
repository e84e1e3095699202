import { randomUUID } from 'node:crypto'
import { isTurnEnd, ServiceError, type ServiceEvent, type Stats } from '../contract/mod.ts'
import type { RunnerClient } from './runner-client.ts'
import type { SessionHub } from './session-hub.ts'

export interface TurnRequest {
  session_id: string
  prompt: string
  instructions?: string | undefined
  work_dir?: string | undefined
}

/** A finished turn as one value: what the REST chat route and the chat adapter answer with. */
export interface TurnOutcome {
  session_id: string
  turn_id: string
  /** The answer text blocks, joined with blank lines. */
  answer: string
  /** Every event of the turn, in order. */
  events: ServiceEvent[]
  /** How the turn ended. */
  end: 'completed' | 'stopped' | 'error'
  stats?: Stats
  error?: ServiceError
}

export interface TurnDeps {
  runners: RunnerClient
  hub: SessionHub
}

/**
 * Starts one turn and follows it to its end. `onEvent` sees each event of the
 * turn as it comes; the promise settles with the whole turn. Rejects only
 * when the turn could not be started.
 */
export async function runTurn(deps: TurnDeps, request: TurnRequest, onEvent?: (event: ServiceEvent) => void): Promise<TurnOutcome> {
  const turnId = `turn_${randomUUID()}`
  const events: ServiceEvent[] = []
  const ended = Promise.withResolvers<TurnOutcome>()
  const detach = deps.hub.attach(request.session_id, (event) => {
    if (event.turn_id !== turnId) return
    events.push(event)
    onEvent?.(event)
    if (isTurnEnd(event)) ended.resolve(outcome(request.session_id, turnId, events, event))
  })
  try {
    await deps.runners.send({
      type: 'execute',
      session_id: request.session_id,
      turn_id: turnId,
      prompt: request.prompt,
      ...(request.instructions !== undefined && { instructions: request.instructions }),
      ...(request.work_dir !== undefined && { work_dir: request.work_dir }),
    })
    return await ended.promise
  } finally {
    detach()
  }
}

function outcome(sessionId: string, turnId: string, events: ServiceEvent[], last: ServiceEvent): TurnOutcome {
  const answer = events
    .filter((event) => event.event === 'answer')
    .map((event) => event.data)
    .join('\n\n')
  const result: TurnOutcome = { session_id: sessionId, turn_id: turnId, answer, events, end: last.event as TurnOutcome['end'] }
  if (last.event === 'completed') result.stats = last.stats
  if (last.event === 'error') result.error = new ServiceError(last.error.code, last.error.message)
  return result
}
