import type { DemandAnswer } from '../reconcile/view.ts'

/** A demand not answered by then is answered INTERNAL (the gateway may ask again). */
export const DEMAND_TTL_MS = 30_000

/** Sessions waiting for a pod of their own: each is answered once, however many times it asked. */
export class PendingDemands {
  readonly #pending = new Map<string, { since: number; waiters: ((answer: DemandAnswer) => void)[] }>()

  /** Waits for the session's answer; a session already waiting keeps the time it first asked. */
  wait(sessionId: string, now: number): Promise<DemandAnswer> {
    return new Promise((resolve) => {
      const pending = this.#pending.get(sessionId) ?? { since: now, waiters: [] }
      pending.waiters.push(resolve)
      this.#pending.set(sessionId, pending)
    })
  }

  /** Answers everyone waiting for this session; nothing when nobody waits. */
  answer(sessionId: string, answer: DemandAnswer): void {
    const pending = this.#pending.get(sessionId)
    if (pending === undefined) return
    this.#pending.delete(sessionId)
    for (const resolve of pending.waiters) resolve(answer)
  }

  /** Answers INTERNAL the sessions that have waited DEMAND_TTL_MS or longer. */
  expire(now: number): void {
    for (const [sessionId, pending] of this.#pending) {
      if (now - pending.since < DEMAND_TTL_MS) continue
      this.answer(sessionId, { ok: false, code: 'INTERNAL', message: 'no pod could be made in time' })
    }
  }

  /** Answers every waiting session alike (leadership moved). */
  answerAll(answer: DemandAnswer): void {
    for (const sessionId of [...this.#pending.keys()]) this.answer(sessionId, answer)
  }

  /** The sessions waiting, in the order they first asked. */
  sessions(): string[] {
    return [...this.#pending.keys()]
  }
}
