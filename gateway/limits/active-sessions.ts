import { isTurnEnd, ServiceError, type ServiceEvent } from '../../contract/mod.ts'

/** Subscribes to a session's events; returns the detach function (SessionHub.attach). */
export type Attach = (sessionId: string, listener: (event: ServiceEvent) => void) => () => void

/**
 * The sessions with a turn running or queued through this gateway, counted
 * from the `execute` commands it sent and the turn-ending events it sees
 * (`completed`, `stopped`, or an `error` that ends that turn: isTurnEnd). A session counts once
 * however many of its turns are queued.
 */
export class ActiveSessions {
  readonly #max: number
  readonly #attach: Attach
  readonly #sessions = new Map<string, { turns: Set<string>; detach: () => void }>()

  /** `max`: sessions at once, 0 = no limit. */
  constructor(max: number, attach: Attach) {
    this.#max = max
    this.#attach = attach
  }

  get count(): number {
    return this.#sessions.size
  }

  /**
   * Counts a turn before its execute is sent. Throws OVERLOADED when it would
   * make one session too many; returns the function that releases the turn
   * when the execute failed (the turn then never ends with an event).
   */
  admit(sessionId: string, turnId: string): () => void {
    let entry = this.#sessions.get(sessionId)
    if (!entry) {
      if (this.#max > 0 && this.#sessions.size >= this.#max) {
        throw new ServiceError('OVERLOADED', `this gateway already runs ${this.#sessions.size} sessions (limits.max_active_sessions); retry later`)
      }
      const turns = new Set<string>()
      const created = { turns, detach: () => {} }
      this.#sessions.set(sessionId, created)
      created.detach = this.#attach(sessionId, (event) => {
        if (event.turn_id !== undefined && isTurnEnd(event)) this.#release(sessionId, event.turn_id)
      })
      entry = created
    }
    entry.turns.add(turnId)
    return () => this.#release(sessionId, turnId)
  }

  #release(sessionId: string, turnId: string): void {
    const entry = this.#sessions.get(sessionId)
    if (!entry?.turns.delete(turnId) || entry.turns.size > 0) return
    this.#sessions.delete(sessionId)
    entry.detach()
  }
}
