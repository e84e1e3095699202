import type { V1Pod } from '@kubernetes/client-node'
import type { ControllerConfig } from '../config.ts'
import { ownerIndex, type World } from '../reconcile/view.ts'
import type { DesiredSession } from '../sessions.ts'
import type { WorldCaches } from './caches.ts'

/** What one pass knows: the pod cache, the registry, the sessions waiting for a pod, and the time. */
export interface WorldInput {
  now: number
  config: ControllerConfig
  pods: readonly V1Pod[]
  sessions: readonly DesiredSession[]
  demands: readonly string[]
  caches: WorldCaches
  /** Per-session credentials: the controller places every session itself. */
  placesSessions: boolean
}

/** The World a reconcile pass plans from; the caches forget what the pods listed now show. No I/O. */
export function buildWorld({ now, config, pods, sessions, demands, caches, placesSessions }: WorldInput): World {
  const known = caches.look(pods, now, config.resync_interval)
  return {
    now,
    pool: config.pool,
    limits: {
      warmPool: config.warm_pool,
      maxPods: config.max_pods,
      readyTimeoutMs: config.pod_ready_timeout,
      idleTimeoutMs: config.session_idle_timeout,
      claimTimeoutMs: config.claim_timeout,
    },
    pods: known.pods,
    inflight: known.inflight,
    sessions: new Map(sessions.map((s) => [s.session_id, s])),
    owners: ownerIndex(sessions),
    demands: [...demands],
    deletedByUs: known.deletedByUs,
    placesSessions,
    unplaceable: known.unplaceable,
  }
}
