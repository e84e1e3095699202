/**
 * Exactly once across reconnections: the last sequence delivered per
 * session. The server replays what came after the `last_seq` the client
 * names; anything at or below it that arrives anyway (a live event that
 * raced the replay) is a repeat and is dropped. Pure.
 */
export class SequenceTracker {
  readonly #last = new Map<string, number>()

  /** The last sequence delivered for the session (0: none yet). */
  last(sessionId: string): number {
    return this.#last.get(sessionId) ?? 0
  }

  /** Whether an event is new (and records it); events without a sequence (live-only, replies) always are. */
  accept(sessionId: string | undefined, seq: number | undefined): boolean {
    if (sessionId === undefined || seq === undefined) return true
    if (seq <= this.last(sessionId)) return false
    this.#last.set(sessionId, seq)
    return true
  }

  /** Starts the session after `seq` (a follower that asked to skip what came before). */
  skipTo(sessionId: string, seq: number): void {
    if (seq > this.last(sessionId)) this.#last.set(sessionId, seq)
  }
}
