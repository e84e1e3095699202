import { ServiceError } from '../../contract/mod.ts'
import { RegistryConflictError, type SessionRecord, type SessionRegistry, type Versioned } from '../../state/mod.ts'

export type Claim =
  /**
   * This runner owns the session now; `takenFrom` is the record of a dead owner it took over from,
   * `ours` says the record named this runner already (after a restart under the same id, or a fence).
   */
  | { kind: 'claimed'; record: Versioned<SessionRecord>; takenFrom?: SessionRecord; ours?: true }
  /** A live runner owns it. */
  | { kind: 'owned'; owner: string }
  /** No record, and the command does not create one. */
  | { kind: 'absent' }

export interface ClaimDeps {
  registry: SessionRegistry
  /** Whether a runner is alive (its lease stands and it answers). */
  isAlive(runnerId: string): Promise<boolean>
}

/** Compare-and-set rounds before giving up on a session that keeps changing under us. */
const MAX_ROUNDS = 8

/**
 * Makes `runnerId` the session's exclusive owner: a new session is created
 * (create-only, so two runners cannot both make it), a released one or one
 * whose owner is dead is taken over with a compare-and-set on its revision.
 */
export async function claimSession(deps: ClaimDeps, sessionId: string, runnerId: string, fresh: (() => SessionRecord) | undefined): Promise<Claim> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const current = await deps.registry.get(sessionId)
    try {
      if (!current) {
        if (!fresh) return { kind: 'absent' }
        const record = { ...fresh(), owner: runnerId }
        return { kind: 'claimed', record: { value: record, revision: await deps.registry.create(record) } }
      }
      const owner = current.value.owner
      if (owner === runnerId) return { kind: 'claimed', record: current, ours: true }
      if (owner !== undefined && (await deps.isAlive(owner))) return { kind: 'owned', owner }
      const record = { ...current.value, owner: runnerId }
      const revision = await deps.registry.update(record, current.revision)
      const claim: Claim = { kind: 'claimed', record: { value: record, revision } }
      if (owner !== undefined) claim.takenFrom = current.value
      return claim
    } catch (err) {
      if (!(err instanceof RegistryConflictError)) throw err
      // Someone else wrote first: read again and decide again.
    }
  }
  throw new ServiceError('RUNNER_UNAVAILABLE', `session ${sessionId} keeps changing; could not claim it`)
}
