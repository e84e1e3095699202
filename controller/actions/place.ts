import type { Logger } from 'pino'
import type { Clock } from '../clock.ts'
import type { SessionAssigner } from '../credentials/assigner.ts'
import type { CredentialRenewals } from '../credentials/renewals.ts'
import type { KubeApi } from '../kube/client.ts'
import { assignedMetadata } from '../sandbox-pods.ts'
import type { ControllerStats } from '../stats.ts'
import type { WorldCaches } from '../world/caches.ts'
import type { PendingDemands } from '../world/demands.ts'

/** A pod whose runner did not listen for its assignment is passed over this long (it is still starting). */
export const NOT_LISTENING_MS = 500

export interface PlacementOptions {
  api: KubeApi
  assigner: SessionAssigner
  renewals: CredentialRenewals
  clock: Clock
  log: Logger
  caches: WorldCaches
  demands: PendingDemands
  stats: ControllerStats
  /** Asks for another pass soon. */
  soon: () => void
}

/** Per-session credentials: the controller hands each session to a pod itself, with a credential for it. */
export class Placement {
  readonly #api: KubeApi
  readonly #assigner: SessionAssigner
  readonly #renewals: CredentialRenewals
  readonly #clock: Clock
  readonly #log: Logger
  readonly #caches: WorldCaches
  readonly #demands: PendingDemands
  readonly #stats: ControllerStats
  readonly #soon: () => void

  constructor(options: PlacementOptions) {
    this.#api = options.api
    this.#assigner = options.assigner
    this.#renewals = options.renewals
    this.#clock = options.clock
    this.#log = options.log
    this.#caches = options.caches
    this.#demands = options.demands
    this.#stats = options.stats
    this.#soon = options.soon
  }

  /**
   * Hands `pod` the session with a credential for it, labels the pod assigned, answers the
   * session's demand, and keeps the credential renewed. A pod not listening yet is passed over
   * for a moment; a pod that refused or did not answer is deleted.
   */
  async place(pod: string, resourceVersion: string, sessionId: string, now: number): Promise<boolean> {
    const placed = this.#caches.placing(pod)
    try {
      const started = performance.now()
      const result = await this.#assigner.assign(pod, sessionId)
      if (!result.ok) {
        if (result.reason === 'not-listening') {
          this.#caches.notListening(pod, this.#clock.now() + NOT_LISTENING_MS)
          this.#soon()
          return true
        }
        // It may hold the credential now, or not: it is not used again.
        this.#log.warn({ pod, session_id: sessionId, reason: result.reason }, `assigning a session failed: ${result.message}`)
        this.#caches.deleting(pod, 'Unassignable', now)
        await this.#api.deletePod(pod)
        this.#stats.deleted++
        this.#soon()
        return true
      }
      this.#caches.changing(pod, resourceVersion)
      // The pod serves the session now, whatever the labels say: the gateway may send at once.
      this.#demands.answer(sessionId, { ok: true, pod, created: false, assigned: true })
      this.#renewals.renewLater(pod, sessionId, result.expiresAt)
      this.#log.info({ pod, session_id: sessionId, ms: Math.round(performance.now() - started) }, 'session placed on its pod with its own credential')
      await this.#api.patchPodMetadata(pod, resourceVersion, assignedMetadata(sessionId, now))
      this.#stats.assigned++
      return true
    } finally {
      placed()
    }
  }
}
