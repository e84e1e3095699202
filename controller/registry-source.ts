import type { Logger } from 'pino'
import { RegistryConflictError, type RecordedTurn, type RegistryChange, type RunnerLeases, type SessionRecord, type SessionRegistry } from '../state/mod.ts'
import type { SandboxErrorCode, SessionEvents } from './events.ts'
import type { DesiredSession, SessionSource } from './sessions.ts'

/** How long a deleted record is kept as `closed`: far longer than a reconcile pass takes to act on it. */
const CLOSED_KEPT_MS = 10 * 60_000

/**
 * The session registry (state/, a JetStream KV bucket in production) as the
 * controller's SessionSource. The registry deletes a session's record when the
 * session ends, so an absent record is a closed session. While watched, the
 * records are kept in memory from the watch (an informer, as for pods), so a
 * reconcile pass costs no KV round trip; unwatched, list() reads the bucket.
 * A record the watch saw deleted stays a while as `closed`: a pod placed on the
 * session then goes at once, where an absent record could also be one its
 * runner has not written yet (the controller waits `claim_timeout` for that).
 */
export function registrySessionSource(registry: SessionRegistry, log: Logger, now: () => number = Date.now): SessionSource {
  let cache: Map<string, DesiredSession> | undefined
  /** When each closed session's record was deleted, to forget it after CLOSED_KEPT_MS. */
  const closedAt = new Map<string, number>()
  const desired = (r: SessionRecord): DesiredSession => ({
    session_id: r.session_id,
    ...(r.owner !== undefined && { owner: r.owner }),
    state: r.state,
    last_active: r.last_active,
  })
  return {
    async list(): Promise<DesiredSession[]> {
      if (cache !== undefined) return [...cache.values()].map((s) => ({ ...s }))
      return (await registry.list()).map(desired)
    },
    watch(onChange: () => void): () => void {
      let stopped = false
      let stop: (() => void) | undefined
      // Changes that arrive while the first list is read are applied after it, in order.
      let buffered: RegistryChange[] | undefined = []
      const apply = (change: RegistryChange) => {
        const at = now()
        for (const [sessionId, deleted] of closedAt) {
          if (at - deleted < CLOSED_KEPT_MS) break
          closedAt.delete(sessionId)
          if (cache?.get(sessionId)?.state === 'closed') cache.delete(sessionId)
        }
        if (change.type === 'put') {
          closedAt.delete(change.record.session_id)
          cache?.set(change.record.session_id, desired(change.record))
          return
        }
        const known = cache?.get(change.session_id)
        if (known === undefined) return
        cache?.set(change.session_id, { ...known, state: 'closed' })
        closedAt.delete(change.session_id)
        closedAt.set(change.session_id, at)
      }
      registry
        .watch((change) => {
          if (buffered) buffered.push(change)
          else apply(change)
          onChange()
        })
        .then(async (s) => {
          if (stopped) return s()
          stop = s
          const records = await registry.list()
          if (stopped) return
          cache = new Map(records.map((r) => [r.session_id, desired(r)]))
          for (const change of buffered ?? []) apply(change)
          buffered = undefined
          onChange()
        })
        .catch((err: unknown) => log.warn({ err }, 'watching the session registry failed; reading it on every pass'))
      return () => {
        stopped = true
        cache = undefined
        stop?.()
      }
    },
  }
}

/**
 * The record without the turns the controller ended (their error events went out), or undefined
 * when it names none of them: a later owner must not end them a second time (RUNNER_LOST after
 * SANDBOX_LOST). A turn recorded since (another id) stays.
 */
export function withoutTurns(record: SessionRecord, ended: readonly RecordedTurn[]): SessionRecord | undefined {
  const ids = new Set(ended.map((turn) => turn.turn_id))
  const running = record.turn_id !== undefined && ids.has(record.turn_id)
  const queued = (record.queued ?? []).filter((turn) => !ids.has(turn.turn_id))
  if (!running && queued.length === (record.queued?.length ?? 0)) return undefined
  const next: SessionRecord = { ...record }
  if (running) {
    next.state = 'idle'
    delete next.turn_id
    delete next.turn_request_id
  }
  if (queued.length > 0) next.queued = queued
  else delete next.queued
  return next
}

/**
 * SessionEvents over the registry: `release` clears the owner with a
 * compare-and-set (only if the dead pod still owns it); `fail` goes to the
 * function given (the lead wires it to the session's event stream).
 */
export class RegistrySessionEvents implements SessionEvents {
  readonly #registry: SessionRegistry
  readonly #fail: (sessionId: string, code: SandboxErrorCode, message: string) => Promise<RecordedTurn[]>
  readonly #leases: RunnerLeases | undefined

  /**
   * `fail` sends the error events and answers the turns it ended. With `leases`, a release also
   * drops the dead pod's runner lease, so no one waits for it to lapse before taking the session.
   */
  constructor(registry: SessionRegistry, fail: (sessionId: string, code: SandboxErrorCode, message: string) => Promise<RecordedTurn[]>, leases?: RunnerLeases) {
    this.#registry = registry
    this.#fail = fail
    this.#leases = leases
  }

  async fail(sessionId: string, code: SandboxErrorCode, message: string): Promise<void> {
    const ended = await this.#fail(sessionId, code, message)
    if (ended.length > 0) await this.#update(sessionId, (record) => withoutTurns(record, ended))
  }

  async release(sessionId: string, runnerId: string): Promise<void> {
    // Released only for pods that finished or are gone: their runner renews nothing any more.
    await this.#leases?.release(runnerId)
    await this.#update(sessionId, (record) => {
      if (record.owner !== runnerId) return undefined
      const { owner: _owner, ...rest } = record
      return rest
    })
  }

  /** Writes `change` of the session's record with compare-and-set, read again on a conflict (3 tries); undefined: nothing to write. */
  async #update(sessionId: string, change: (record: SessionRecord) => SessionRecord | undefined): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await this.#registry.get(sessionId)
      if (current === undefined) return
      const next = change(current.value)
      if (next === undefined) return
      try {
        await this.#registry.update(next, current.revision)
        return
      } catch (err) {
        if (!(err instanceof RegistryConflictError)) throw err
      }
    }
  }
}
