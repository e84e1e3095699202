import type { RequestId } from '../../contract/mod.ts'
import type { RecordedTurn } from '../../state/mod.ts'
import type { TurnClock } from './turn-clock.ts'

/** A prompt in a session's queue. */
export interface Turn {
  id: string
  prompt: string
  instructions?: string | undefined
  requestId?: RequestId | undefined
  /** Set once the turn was started again in a new CLI process (runner/session/retry.ts). */
  retried?: boolean
}

/** The turn a session runs. */
export interface ActiveTurn extends Turn {
  /** Tool call id -> tool name, of the calls made so far. */
  toolNames: Map<string, string>
  toolCalls: number
  /** engine.timeout, paused while the turn waits for a person. */
  clock?: TurnClock | undefined
  /** Set when the turn is being ended by the service rather than by the CLI. */
  ending?: 'stop' | 'timeout' | undefined
}

/** The turn a session starts, and what the session it runs in is fixed to (the registry record says so: ownership/record.ts). */
export interface StartedTurn {
  turnId: string
  requestId: RequestId | undefined
  workDir: string | undefined
  /** The engine the session runs. */
  engine: string | undefined
}

/** A turn as the session record names it. */
export function recorded(turn: Turn): RecordedTurn {
  return turn.requestId === undefined ? { turn_id: turn.id } : { turn_id: turn.id, request_id: turn.requestId }
}
