import type { V1Pod } from '@kubernetes/client-node'
import type { ActionKey } from '../actions/key.ts'
import type { PodPurpose } from '../pod-spec.ts'
import { podView, type DeleteReason, type World } from '../reconcile/view.ts'

/** A created pod the watch has not shown yet is forgotten after this (the next list shows the truth). */
export const INFLIGHT_TTL_MS = 60_000
/** How long a session failure or release is remembered, so it is sent once. */
export const REPORTED_TTL_MS = 10 * 60_000

/** Takes back what was just recorded: the API call it was recorded for failed. */
export type Undo = () => void

/** The parts of a World that come from what this controller did, not from the pod cache. */
export type WorldFromCaches = Pick<World, 'pods' | 'inflight' | 'deletedByUs' | 'unplaceable'>

/**
 * What this controller did that the pod cache may not show yet, each entry
 * forgotten once the cache shows it, its pod is gone, or it expires. No I/O:
 * the caller says which pods are listed and what time it is.
 */
export class WorldCaches {
  /** Pods created and not listed yet. */
  readonly #inflight = new Map<string, { purpose: PodPurpose; at: number }>()
  /** Pods whose labels are being changed: pod → the resourceVersion the change was made against. */
  readonly #changing = new Map<string, string>()
  readonly #deletedByUs = new Map<string, { reason: DeleteReason; at: number }>()
  /** Failures and releases sent, when. */
  readonly #reported = new Map<ActionKey, number>()
  /** Pods being handed a session now (per-session credentials). */
  readonly #placing = new Set<string>()
  /** Pods whose runner did not listen for its assignment yet, until when. */
  readonly #notListening = new Map<string, number>()

  /** A pod is being created: it counts as on its way until it is listed. */
  created(pod: string, purpose: PodPurpose, at: number): Undo {
    this.#inflight.set(pod, { purpose, at })
    return () => this.#inflight.delete(pod)
  }

  /** The watch showed the pod (maybe already deleted): it is no longer on its way. */
  seen(pod: string): void {
    this.#inflight.delete(pod)
  }

  /** A label change of the pod is being sent: the pod is left alone until its version moves on. */
  changing(pod: string, resourceVersion: string): Undo {
    this.#changing.set(pod, resourceVersion)
    return () => this.#changing.delete(pod)
  }

  /** This controller is deleting the pod, for `reason`. */
  deleting(pod: string, reason: DeleteReason, at: number): Undo {
    this.#deletedByUs.set(pod, { reason, at })
    return () => this.#deletedByUs.delete(pod)
  }

  /** Records a failure or release as sent; undefined when it was sent already (within REPORTED_TTL_MS). */
  report(key: ActionKey, at: number): Undo | undefined {
    if (this.#reported.has(key)) return undefined
    this.#reported.set(key, at)
    return () => this.#reported.delete(key)
  }

  /** A session is being placed on the pod; the returned function says it is done. */
  placing(pod: string): () => void {
    this.#placing.add(pod)
    return () => this.#placing.delete(pod)
  }

  isPlacing(pod: string): boolean {
    return this.#placing.has(pod)
  }

  /** The pod's runner did not listen for its assignment: no session is placed on it until `until`. */
  notListening(pod: string, until: number): void {
    this.#notListening.set(pod, until)
  }

  /** Leadership ended: what was being created or changed is forgotten (the next leader lists again). */
  forgetLeadership(): void {
    this.#inflight.clear()
    this.#changing.clear()
  }

  /**
   * Forgets what the listed pods show and what expired, and reads each listed pod
   * with what this controller knows of it. A delete older than `resyncMs` that the
   * pod outlived (no deletionTimestamp, still listed) no longer counts, so it is tried again.
   */
  look(pods: readonly V1Pod[], now: number, resyncMs: number): WorldFromCaches {
    const names = new Set(pods.map((p) => p.metadata!.name!))
    for (const [name, { at }] of this.#inflight) if (names.has(name) || now - at > INFLIGHT_TTL_MS) this.#inflight.delete(name)
    for (const name of this.#deletedByUs.keys()) if (!names.has(name)) this.#deletedByUs.delete(name)
    for (const name of this.#changing.keys()) if (!names.has(name)) this.#changing.delete(name)
    for (const [key, at] of this.#reported) if (now - at > REPORTED_TTL_MS) this.#reported.delete(key)
    for (const [name, until] of this.#notListening) if (now >= until) this.#notListening.delete(name)
    const views = pods.map((pod) => {
      const name = pod.metadata!.name!
      const changingFrom = this.#changing.get(name)
      if (changingFrom !== undefined && changingFrom !== pod.metadata?.resourceVersion) this.#changing.delete(name)
      const deleted = this.#deletedByUs.get(name)
      return podView(pod, { deletedByUs: deleted !== undefined && now - deleted.at < resyncMs, changing: this.#changing.has(name) })
    })
    return {
      pods: views,
      inflight: [...this.#inflight].map(([name, { purpose }]) => ({ name, purpose })),
      deletedByUs: new Map([...this.#deletedByUs].map(([name, { reason }]) => [name, reason])),
      unplaceable: new Set([...this.#placing, ...this.#notListening.keys()]),
    }
  }
}
