import type { Logger } from 'pino'
import { RegistryConflictError, type RegistryChange, type RunnerLeases, type SessionRecord, type SessionRegistry } from '../state/mod.ts'
import type { SandboxErrorCode, SessionEvents } from './events.ts'
import type { DesiredSession, SessionSource } from './sessions.ts'

/**
 * The session registry (state/, a JetStream KV bucket in production) as the
 * controller's SessionSource. The registry deletes a session's record when the
 * session ends, so an absent record is a closed session. While watched, the
 * records are kept in memory from the watch (an informer, as for pods), so a
 * reconcile pass costs no KV round trip; unwatched, list() reads the bucket.
 */
export function registrySessionSource(registry: SessionRegistry, log: Logger): SessionSource {
  let cache: Map<string, DesiredSession> | undefined
  const desired = (r: SessionRecord): DesiredSession => ({ session_id: r.session_id, ...(r.owner !== undefined && { owner: r.owner }), state: r.state, last_active: r.last_active })
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
        if (change.type === 'put') cache?.set(change.record.session_id, desired(change.record))
        else cache?.delete(change.session_id)
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
 * SessionEvents over the registry: `release` clears the owner with a
 * compare-and-set (only if the dead pod still owns it); `fail` goes to the
 * function given (the lead wires it to the session's event stream).
 */
export class RegistrySessionEvents implements SessionEvents {
  readonly #registry: SessionRegistry
  readonly #fail: (sessionId: string, code: SandboxErrorCode, message: string) => Promise<void>
  readonly #leases: RunnerLeases | undefined

  /** With `leases`, a release also drops the dead pod's runner lease, so no one waits for it to lapse before taking the session. */
  constructor(registry: SessionRegistry, fail: (sessionId: string, code: SandboxErrorCode, message: string) => Promise<void>, leases?: RunnerLeases) {
    this.#registry = registry
    this.#fail = fail
    this.#leases = leases
  }

  fail(sessionId: string, code: SandboxErrorCode, message: string): Promise<void> {
    return this.#fail(sessionId, code, message)
  }

  async release(sessionId: string, runnerId: string): Promise<void> {
    // Released only for pods that finished or are gone: their runner renews nothing any more.
    await this.#leases?.release(runnerId)
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await this.#registry.get(sessionId)
      if (current === undefined || current.value.owner !== runnerId) return
      const { owner: _owner, ...rest } = current.value
      try {
        await this.#registry.update(rest, current.revision)
        return
      } catch (err) {
        if (!(err instanceof RegistryConflictError)) throw err
      }
    }
  }
}
