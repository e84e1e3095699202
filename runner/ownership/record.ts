import { emptyStats, type Stats } from '../../contract/mod.ts'
import type { RecordedTurn, SessionRecord } from '../../state/mod.ts'
import type { StartedTurn } from '../session/turn.ts'

/**
 * The changes a runner makes to a session's registry record, as pure
 * functions of the record (record-writer.ts applies them in order).
 */

/** The record of a session created on this runner (the claim adds the owner). */
export function newRecord(sessionId: string, cliSessionId: string, now = Date.now()): SessionRecord {
  return { session_id: sessionId, state: 'idle', cli_session_id: cliSessionId, created_at: now, last_active: now, stats: emptyStats() }
}

/** A turn runs; `queued` are the turns waiting behind it. */
export function markBusy(record: SessionRecord, turn: StartedTurn, queued: RecordedTurn[]): void {
  record.state = 'busy'
  record.turn_id = turn.turnId
  if (turn.workDir !== undefined) record.work_dir = turn.workDir
  if (turn.engine !== undefined) record.engine = turn.engine
  if (turn.requestId === undefined) delete record.turn_request_id
  else record.turn_request_id = turn.requestId
  setQueue(record, queued)
}

/** No turn runs; `queued` are the turns still waiting (none when the session was stopped, handed back or lost). */
export function markIdle(record: SessionRecord, queued: RecordedTurn[] = [], stats?: Stats): void {
  record.state = 'idle'
  delete record.turn_id
  delete record.turn_request_id
  setQueue(record, queued)
  if (stats !== undefined) record.stats = stats
}

/** The turns waiting, as the session has them. */
export function setQueue(record: SessionRecord, queued: RecordedTurn[]): void {
  if (queued.length === 0) delete record.queued
  else record.queued = queued
}
