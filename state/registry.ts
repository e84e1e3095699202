import { z } from 'zod'
import { RequestId } from '../contract/events.ts'
import { Stats } from '../contract/stats.ts'

/**
 * The session registry: who owns each session and what state it is in. Dev
 * mode keeps it in memory; production in a JetStream key-value bucket, so any
 * gateway and any runner sees the same records.
 */
export const SessionRecord = z.object({
  session_id: z.string(),
  /** The runner that owns the session now; none when it is released. */
  owner: z.string().optional(),
  state: z.enum(['idle', 'busy']),
  work_dir: z.string().optional(),
  /** The engine the session runs (engines[].name), fixed by its first turn; none: a session from before engines had names, which runs the default. */
  engine: z.string().optional(),
  cli_session_id: z.string(),
  /** The turn running now, so whoever takes over from a dead owner can end it. */
  turn_id: z.string().optional(),
  /** The request_id of that turn's execute, echoed on its last event. */
  turn_request_id: RequestId.optional(),
  /** The turns waiting behind it, oldest first: whoever takes over from a dead owner ends them too. */
  queued: z.array(z.object({ turn_id: z.string(), request_id: RequestId.optional() })).optional(),
  created_at: z.number(),
  /** Epoch ms of the last command or output. */
  last_active: z.number(),
  stats: Stats,
})
export type SessionRecord = z.output<typeof SessionRecord>

/** A turn a record names: its id and its execute's request_id. */
export type RecordedTurn = NonNullable<SessionRecord['queued']>[number]

/** The turns a record says were taken and not ended: the one running, then those waiting. */
export function unfinishedTurns(record: SessionRecord): RecordedTurn[] {
  const running = record.state === 'busy' && record.turn_id !== undefined ? [{ turn_id: record.turn_id, request_id: record.turn_request_id }] : []
  return [...running, ...(record.queued ?? [])]
}

/** A record with the revision it was read at, for compare-and-set writes. */
export interface Versioned<T> {
  value: T
  revision: number
}

/** A write lost a race: the record changed since it was read. */
export class RegistryConflictError extends Error {
  override readonly name = 'RegistryConflictError'
}

export type RegistryChange = { type: 'put'; record: SessionRecord } | { type: 'delete'; session_id: string }

export interface SessionRegistry {
  get(sessionId: string): Promise<Versioned<SessionRecord> | undefined>
  /** Creates the record; RegistryConflictError when one exists. */
  create(record: SessionRecord): Promise<number>
  /** Replaces the record if it is still at `revision`; RegistryConflictError otherwise. */
  update(record: SessionRecord, revision: number): Promise<number>
  delete(sessionId: string): Promise<void>
  list(): Promise<SessionRecord[]>
  /** Calls `onChange` for every later change; returns the function that stops it. */
  watch(onChange: (change: RegistryChange) => void): Promise<() => void>
}

/** A runner's lease: present while the runner renews it, gone after `state.lease_ttl` without. */
export const RunnerLease = z.object({
  runner_id: z.string(),
  host: z.string(),
  pid: z.number(),
  sessions: z.number(),
  max_sessions: z.number(),
  renewed_at: z.number(),
})
export type RunnerLease = z.output<typeof RunnerLease>

export interface RunnerLeases {
  /** Writes (or renews) the lease. */
  renew(lease: RunnerLease): Promise<void>
  get(runnerId: string): Promise<RunnerLease | undefined>
  list(): Promise<RunnerLease[]>
  /** Drops the lease at once (a clean shutdown). */
  release(runnerId: string): Promise<void>
}
