/**
 * What the controller needs to know about sessions: which runner (pod) owns
 * each one, whether a turn runs, and when it was last active. The session
 * registry (a JetStream KV bucket, issue 6) is adapted to this interface; the
 * in-memory source below serves tests and the benchmark.
 */

/** One session as the registry shows it. */
export interface DesiredSession {
  session_id: string
  /** The runner that claimed it: in a cluster the RUNNER_ID of a sandbox pod, i.e. the pod's name. */
  owner?: string
  /** `busy` while a turn runs; `closed` once the session ended (its pod can go). */
  state: 'idle' | 'busy' | 'closed'
  /** Epoch ms of the last command or event. */
  last_active: number
}

/** The session registry, read-only, as the controller sees it. */
export interface SessionSource {
  /** Every session the registry holds (closed ones may be left out: absent means gone). */
  list(): Promise<DesiredSession[]>
  /**
   * Calls `onChange` after any session changes (created, claimed, state, deleted).
   * The controller re-lists on each call, so a coalesced or spurious call is fine.
   * Returns a function that stops watching.
   */
  watch(onChange: () => void): () => void
}

/** An in-memory registry: tests and the benchmark write it, the controller reads it. */
export class MemorySessionSource implements SessionSource {
  readonly #sessions = new Map<string, DesiredSession>()
  readonly #listeners = new Set<() => void>()

  async list(): Promise<DesiredSession[]> {
    return [...this.#sessions.values()].map((s) => ({ ...s }))
  }

  watch(onChange: () => void): () => void {
    this.#listeners.add(onChange)
    return () => this.#listeners.delete(onChange)
  }

  get(sessionId: string): DesiredSession | undefined {
    const session = this.#sessions.get(sessionId)
    return session && { ...session }
  }

  /** Creates or replaces a session record. */
  put(session: DesiredSession): void {
    this.#sessions.set(session.session_id, { ...session })
    this.#notify()
  }

  /** Changes some fields of an existing record. */
  update(sessionId: string, change: Partial<Omit<DesiredSession, 'session_id'>>): void {
    const session = this.#sessions.get(sessionId)
    if (session === undefined) throw new Error(`no session ${sessionId}`)
    this.#sessions.set(sessionId, { ...session, ...change })
    this.#notify()
  }

  /** Claims a session for a runner unless another runner owns it (compare-and-set, as on the KV). */
  claim(sessionId: string, owner: string, now: number): boolean {
    const session = this.#sessions.get(sessionId)
    if (session?.owner !== undefined && session.owner !== owner) return false
    this.put({ session_id: sessionId, owner, state: session?.state === 'busy' ? 'busy' : 'idle', last_active: now })
    return true
  }

  delete(sessionId: string): void {
    this.#sessions.delete(sessionId)
    this.#notify()
  }

  #notify(): void {
    for (const listener of this.#listeners) listener()
  }
}
