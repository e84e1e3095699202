import { randomUUID } from 'node:crypto'
import { isTurnEnd, ServiceError, type ServiceEvent, type Stats } from '../../contract/mod.ts'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'
import { AnswerText, MAX_ANSWER_BYTES } from './answer-text.ts'
import { handOffTurn } from './hand-off.ts'

export interface TurnRequest {
  session_id: string
  prompt: string
  instructions?: string | undefined
  work_dir?: string | undefined
  /** The engine a new session runs (none: the default). */
  engine?: string | undefined
}

/** A finished turn as one value: what the chat adapter answers with. */
export interface TurnOutcome {
  session_id: string
  turn_id: string
  /** The answer text blocks, joined with blank lines; at most MAX_ANSWER_BYTES of them. */
  answer: string
  /** Set when the answer was cut at MAX_ANSWER_BYTES. */
  truncated?: true
  /** How the turn ended. */
  end: 'completed' | 'stopped' | 'error'
  stats?: Stats
  error?: ServiceError
}

export interface TurnDeps {
  runners: Runners
  hub: SessionHub
  /** Refuses (SESSION_NOT_FOUND) a session the caller's tenant may not use; claims a new one (gateway/auth/owners.ts). */
  admit?: ((sessionId: string) => Promise<void>) | undefined
}

/**
 * Starts one turn and follows it to its end. `onEvent` sees each event of the
 * turn as it comes; the promise settles with the answer and how it ended
 * (events are not kept: a turn can have millions). Rejects only when the turn
 * could not be started.
 */
export async function runTurn(deps: TurnDeps, request: TurnRequest, onEvent?: (event: ServiceEvent) => void): Promise<TurnOutcome> {
  await deps.admit?.(request.session_id)
  const answer = new AnswerText(MAX_ANSWER_BYTES)
  const { turn_id, end } = await followTurn(deps, request, (event) => {
    if (event.event === 'answer') answer.add(event.data)
    onEvent?.(event)
  })
  return outcome(request.session_id, turn_id, answer, end!)
}

/**
 * Starts one turn and hands each of its events to `onEvent` as it comes,
 * keeping none of them; settles with the end event, or with no end when
 * `until` (a client gone) came first. Rejects only when the turn could not be
 * started.
 */
export async function followTurn(
  deps: TurnDeps,
  request: TurnRequest,
  onEvent: (event: ServiceEvent) => void,
  until?: Promise<void>,
): Promise<{ turn_id: string; end: ServiceEvent | undefined }> {
  const turnId = `turn_${randomUUID()}`
  const ended = Promise.withResolvers<ServiceEvent | undefined>()
  let done = false
  const detach = deps.hub.attach(request.session_id, (event) => {
    if (done || event.turn_id !== turnId) return
    onEvent(event)
    if (isTurnEnd(event)) {
      done = true
      ended.resolve(event)
    }
  })
  void until?.then(() => {
    done = true
    ended.resolve(undefined)
  })
  try {
    await handOffTurn(deps, {
      type: 'execute',
      session_id: request.session_id,
      turn_id: turnId,
      prompt: request.prompt,
      ...(request.instructions !== undefined && { instructions: request.instructions }),
      ...(request.work_dir !== undefined && { work_dir: request.work_dir }),
      ...(request.engine !== undefined && { engine: request.engine }),
    })
    return { turn_id: turnId, end: await ended.promise }
  } finally {
    detach()
  }
}

function outcome(sessionId: string, turnId: string, answer: AnswerText, last: ServiceEvent): TurnOutcome {
  const result: TurnOutcome = { session_id: sessionId, turn_id: turnId, answer: answer.text, ...answer.flag, end: last.event as TurnOutcome['end'] }
  if (last.event === 'completed') result.stats = last.stats
  if (last.event === 'error') result.error = new ServiceError(last.error.code, last.error.message)
  return result
}
