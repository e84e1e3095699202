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

/** Answer text kept at most (UTF-8 bytes): a turn's events are never kept, and its answer is bounded too. */
export const MAX_TURN_ANSWER_BYTES = 8 * 1024 * 1024

/** A finished turn as one value: what the chat adapter answers with. */
export interface TurnOutcome {
  session_id: string
  turn_id: string
  /** The answer text blocks, joined with blank lines; at most MAX_TURN_ANSWER_BYTES of them. */
  answer: string
  /** Set when answer text past MAX_TURN_ANSWER_BYTES was left out. */
  truncated?: true
  /** How the turn ended. */
  end: 'completed' | 'stopped' | 'error'
  stats?: Stats
  error?: ServiceError
}

export interface TurnDeps {
  runners: RunnerClient
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
  const turnId = `turn_${randomUUID()}`
  const answer = new AnswerText()
  const ended = Promise.withResolvers<TurnOutcome>()
  const detach = deps.hub.attach(request.session_id, (event) => {
    if (event.turn_id !== turnId) return
    if (event.event === 'answer') answer.add(event.data)
    onEvent?.(event)
    if (isTurnEnd(event)) ended.resolve(outcome(request.session_id, turnId, answer, event))
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

/** Answer blocks up to MAX_TURN_ANSWER_BYTES; what comes after is counted out, not kept. */
class AnswerText {
  readonly #blocks: string[] = []
  #bytes = 0
  truncated = false

  add(block: string): void {
    if (this.truncated) return
    const bytes = Buffer.byteLength(block) + (this.#blocks.length > 0 ? 2 : 0)
    if (this.#bytes + bytes > MAX_TURN_ANSWER_BYTES) {
      this.truncated = true
      return
    }
    this.#bytes += bytes
    this.#blocks.push(block)
  }

  toString(): string {
    return this.#blocks.join('\n\n')
  }
}

function outcome(sessionId: string, turnId: string, answer: AnswerText, last: ServiceEvent): TurnOutcome {
  const result: TurnOutcome = { session_id: sessionId, turn_id: turnId, answer: answer.toString(), end: last.event as TurnOutcome['end'] }
  if (answer.truncated) result.truncated = true
  if (last.event === 'completed') result.stats = last.stats
  if (last.event === 'error') result.error = new ServiceError(last.error.code, last.error.message)
  return result
}
