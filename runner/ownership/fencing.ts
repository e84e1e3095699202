import type { Logger } from 'pino'
import type { RecordedTurn } from '../../state/mod.ts'

/** What a fence cut short in a session: its turns, and the last sequence this runner gave its events. */
export interface Fenced {
  turns: RecordedTurn[]
  lastSeq: number
}

/**
 * The sessions a fence ended here with turns running or waiting. Nobody has
 * told their clients that those turns are over: this runner does, when it
 * claims the session again, or takes it back once its lease stands again. A
 * session another runner took meanwhile is that runner's to tell.
 */
export class FencedSessions {
  readonly #fenced = new Map<string, Fenced>()
  readonly #log: Logger

  constructor(log: Logger) {
    this.#log = log
  }

  add(sessionId: string, fenced: Fenced): void {
    if (fenced.turns.length > 0) this.#fenced.set(sessionId, fenced)
  }

  /** Forgets the session; returns what the fence cut short when the claim found the record still naming this runner. */
  take(sessionId: string, ours: boolean): Fenced | undefined {
    const fenced = ours ? this.#fenced.get(sessionId) : undefined
    this.#fenced.delete(sessionId)
    return fenced
  }

  /**
   * Takes every one back (after a renewal). One that cannot be taken back yet
   * is tried again after the next renewal, unless a claim (`held`) took it meanwhile.
   */
  reclaimAll(takeBack: (sessionId: string, fenced: Fenced) => Promise<void>, held: (sessionId: string) => boolean): void {
    for (const [sessionId, fenced] of this.#fenced) {
      this.#fenced.delete(sessionId)
      void takeBack(sessionId, fenced).catch((err: unknown) => {
        if (!held(sessionId) && !this.#fenced.has(sessionId)) this.#fenced.set(sessionId, fenced)
        this.#log.warn({ err, session_id: sessionId }, 'cannot take back a fenced session yet')
      })
    }
  }
}
