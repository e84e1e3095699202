import { ServiceError } from '../../contract/mod.ts'

/**
 * A command for a session another runner owns: NOT_OWNER on the wire, and
 * the owner's id, which the runner's answer names so the gateway can go there
 * directly. (Its `name` stays the contract's `ServiceError`, which fixes it.)
 */
export class NotOwnerError extends ServiceError {
  readonly owner: string

  constructor(sessionId: string, owner: string) {
    super('NOT_OWNER', `session ${sessionId} is owned by runner ${owner}`)
    this.owner = owner
  }
}
