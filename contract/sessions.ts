import { z } from 'zod'
import { SessionId } from './commands.ts'
import { ServiceEventSchema } from './events.ts'
import { Stats } from './stats.ts'

/**
 * The session directory's wire shapes (GET /v1/sessions, GET /v1/sessions/{id},
 * the JSON page of GET /v1/sessions/{id}/events): every session the caller's
 * tenant owns, whichever surface made it.
 */

/** One session as the directory shows it. Times are epoch milliseconds. */
export const SessionSummary = z.object({
  session_id: z.string(),
  /** `busy` while a turn runs, else `idle`. */
  state: z.enum(['idle', 'busy']),
  /** The runner holding the session now; null when none does (released after idling, or its runner stopped). */
  owner: z.string().nullable(),
  /** The session's sandbox directory on its runner (absolute), once a turn has run; null before. */
  work_dir: z.string().nullable(),
  /** The engine the session runs (engines[].name), fixed by its first turn; null before one ran. */
  engine: z.string().nullable(),
  created_at: z.number().int(),
  /** The last command or output. */
  last_active: z.number().int(),
  /** The running turn's id; null when idle. */
  turn_id: z.string().nullable(),
  /** Prompts waiting behind the running turn. */
  queued_turns: z.number().int().nonnegative(),
  /** The session's counters, summed over its turns. */
  stats: Stats,
})
export type SessionSummary = z.output<typeof SessionSummary>

/** Largest page of the directory. */
export const MAX_SESSIONS_PAGE = 200
/** Largest page of events. */
export const MAX_EVENTS_PAGE = 1000

/** A decimal count in a query string, between 1 and `max`. */
const PageLimit = (max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(max))
    .default(fallback)

/**
 * GET /v1/sessions: newest first (by `created_at`, then `session_id`). `cursor` is the
 * `next_cursor` of the page before; a session created after the first page never
 * shifts later pages.
 */
export const SessionListQuery = z.strictObject({
  state: z.enum(['idle', 'busy']).optional(),
  limit: PageLimit(MAX_SESSIONS_PAGE, 50),
  cursor: z.string().max(600).optional(),
})
export type SessionListQuery = z.output<typeof SessionListQuery>

export const SessionList = z.object({
  sessions: z.array(SessionSummary),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
})
export type SessionList = z.output<typeof SessionList>

/** GET /v1/sessions/{id}/events with `Accept: application/json`: the stored events after `after_seq`. */
export const SessionEventsQuery = z.object({
  after_seq: z
    .string()
    .regex(/^\d{1,15}$/, 'must be an event sequence number')
    .transform(Number)
    .default(0),
  limit: PageLimit(MAX_EVENTS_PAGE, 100),
  /** The SSE form's resume point (ignored by the JSON page). */
  last_seq: z.string().optional(),
})
export type SessionEventsQuery = z.output<typeof SessionEventsQuery>

export const SessionEventsPage = z.object({
  session_id: z.string(),
  /** Oldest first, each with its `seq`. Live-only events (deltas, pulses) are never stored, so never here. */
  events: z.array(ServiceEventSchema),
  /** Pass as `after_seq` for the next page: the last event's seq, or the `after_seq` asked when the page is empty. */
  next_after_seq: z.number().int().nonnegative(),
  /** More stored events follow this page. */
  has_more: z.boolean(),
})
export type SessionEventsPage = z.output<typeof SessionEventsPage>

/** DELETE /v1/sessions/{id}. */
export const SessionDeleted = z.object({
  session_id: z.string(),
  /** True: the session's work was stopped, its process ended and its record removed. */
  deleted: z.literal(true),
})
export type SessionDeleted = z.output<typeof SessionDeleted>

/** The `{id}` of the directory's routes. */
export const SessionIdParams = z.object({ id: SessionId })
export type SessionIdParams = z.output<typeof SessionIdParams>
