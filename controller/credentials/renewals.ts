import type { V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Background } from '../background.ts'
import type { Clock } from '../clock.ts'
import { ANNOTATION } from '../labels.ts'
import type { SessionAssigner } from './assigner.ts'

/** A renewal that failed is tried again this soon (the credential it replaces is still valid). */
export const RENEW_RETRY_MS = 1_000

export interface CredentialRenewalsOptions {
  assigner: SessionAssigner
  clock: Clock
  log: Logger
  background: Background
}

/** Pod → the session it was placed with, of each placed pod with a running (not deleted) runner. */
export function placedPods(pods: readonly V1Pod[]): Map<string, string> {
  const placed = new Map<string, string>()
  for (const pod of pods) {
    const sessionId = pod.metadata?.annotations?.[ANNOTATION.sessionId]
    if (sessionId !== undefined && pod.metadata?.deletionTimestamp == null && pod.status?.phase === 'Running') placed.set(pod.metadata!.name!, sessionId)
  }
  return placed
}

/**
 * Per-session credentials of placed pods, each renewed after two thirds of its
 * life by handing the pod its session again; a failed renewal is tried again soon.
 */
export class CredentialRenewals {
  readonly #assigner: SessionAssigner
  readonly #clock: Clock
  readonly #log: Logger
  readonly #background: Background
  /** Pod → its session and the timer of its next renewal. */
  readonly #renewals = new Map<string, { sessionId: string; cancel: () => void }>()

  constructor(options: CredentialRenewalsOptions) {
    this.#assigner = options.assigner
    this.#clock = options.clock
    this.#log = options.log
    this.#background = options.background
  }

  /** Renews the pod's credential for `sessionId`, which expires at `expiresAt`, after two thirds of its life. */
  renewLater(pod: string, sessionId: string, expiresAt: number): void {
    this.#renewals.get(pod)?.cancel()
    const ttl = this.#assigner.ttlMs
    const at = Math.max(this.#clock.now(), expiresAt - ttl / 3)
    const cancel = this.#clock.after(at - this.#clock.now(), () => {
      const renewed = this.#assigner.assign(pod, sessionId).then(
        (result) => {
          if (this.#renewals.get(pod)?.cancel !== cancel) return
          if (result.ok) return this.renewLater(pod, sessionId, result.expiresAt)
          this.#log.warn({ pod, session_id: sessionId, reason: result.reason }, 'renewing a session credential failed; trying again')
          this.renewLater(pod, sessionId, this.#clock.now() + RENEW_RETRY_MS + ttl / 3)
        },
        (err: unknown) => this.#log.warn({ err, pod }, 'renewing a session credential failed'),
      )
      this.#background.track(renewed)
    })
    this.#renewals.set(pod, { sessionId, cancel })
  }

  /**
   * Renewals follow the placed pods (`pods`: the cache now): a pod gone has none; a placed pod
   * without one (a new leader does not know when its credential expires) gets a fresh credential
   * now, unless a session is being placed on it.
   */
  follow(pods: readonly V1Pod[], isPlacing: (pod: string) => boolean): void {
    const cached = new Map(pods.map((pod) => [pod.metadata!.name!, pod]))
    for (const [pod, renewal] of this.#renewals) {
      const seen = cached.get(pod)
      const labelled = seen?.metadata?.annotations?.[ANNOTATION.sessionId]
      // Just placed: the cache may not show its labels yet.
      if (seen !== undefined && seen.metadata?.deletionTimestamp == null && (labelled === undefined || labelled === renewal.sessionId)) continue
      renewal.cancel()
      this.#renewals.delete(pod)
    }
    for (const [pod, sessionId] of placedPods(pods)) if (!this.#renewals.has(pod) && !isPlacing(pod)) this.renewLater(pod, sessionId, this.#clock.now())
  }

  /** Leadership ended: no more renewals (the next leader renews every placed pod at once). */
  stopAll(): void {
    for (const { cancel } of this.#renewals.values()) cancel()
    this.#renewals.clear()
  }
}
