import { ServiceError, type ServiceEvent } from '../../../contract/mod.ts'
import type { SessionEventsPage, SessionList, SessionListQuery, SessionSummary } from '../../../contract/sessions.ts'
import type { SessionRecord } from '../../../state/mod.ts'

/**
 * The directory's pure parts: a registry record as the client sees it, the order and the
 * cursor of the session list, and a page of events. No I/O.
 */

/** A registry record as the directory shows it (the CLI's own session id and the execute request ids stay inside). */
export function toSummary(record: SessionRecord): SessionSummary {
  return {
    session_id: record.session_id,
    state: record.state,
    owner: record.owner ?? null,
    work_dir: record.work_dir ?? null,
    engine: record.engine ?? null,
    created_at: record.created_at,
    last_active: record.last_active,
    turn_id: record.state === 'busy' ? (record.turn_id ?? null) : null,
    queued_turns: record.queued?.length ?? 0,
    stats: record.stats,
  }
}

/** Where a page starts: after this session in the list's order. */
interface Cursor {
  created_at: number
  session_id: string
}

/** Newest first; sessions created in the same millisecond by id, so the order is total. */
function compare(a: Cursor, b: Cursor): number {
  return b.created_at - a.created_at || (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0)
}

/** The opaque cursor of the session after which the next page starts. */
export function encodeCursor(at: Cursor): string {
  return Buffer.from(JSON.stringify([at.created_at, at.session_id])).toString('base64url')
}

/** Reads a cursor; BAD_REQUEST when it is not one this service wrote. */
export function decodeCursor(text: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string')
      return { created_at: value[0], session_id: value[1] }
  } catch {
    // Answered below, as any other malformed cursor.
  }
  throw new ServiceError('BAD_REQUEST', 'field "cursor": not a cursor of this service (pass next_cursor back unchanged)')
}

/** One page of `records` (already the caller's own) for `query`. */
export function sessionPage(records: readonly SessionRecord[], query: SessionListQuery): SessionList {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  const matching = records.filter(
    (record) => (query.state === undefined || record.state === query.state) && (after === undefined || compare(after, record) < 0),
  )
  matching.sort(compare)
  const page = matching.slice(0, query.limit)
  const last = page.at(-1)
  return { sessions: page.map(toSummary), next_cursor: matching.length > page.length && last ? encodeCursor(last) : null }
}

/** The stored events after `afterSeq`, at most `limit`, oldest first. `events` are the session's stored events after `afterSeq`. */
export function eventsPage(sessionId: string, events: readonly ServiceEvent[], afterSeq: number, limit: number): SessionEventsPage {
  const page = events.slice(0, limit)
  return { session_id: sessionId, events: page, next_after_seq: page.at(-1)?.seq ?? afterSeq, has_more: events.length > page.length }
}
