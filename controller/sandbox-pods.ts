import type { V1Secret } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { ControllerConfig } from './config.ts'
import type { SessionAssigner } from './credentials/assigner.ts'
import { isConflict, type KubeApi, type MetadataChange } from './kube/client.ts'
import { ANNOTATION, LABEL, MANAGED_BY, sessionLabelValue } from './labels.ts'
import { buildSandboxPod, newPodName, POD_CREDS_KEY, podCredentialsSecret, type PodPurpose } from './pod-spec.ts'
import type { ControllerStats } from './stats.ts'
import type { WorldCaches } from './world/caches.ts'
import type { PendingDemands } from './world/demands.ts'

/** The labels and annotations of a pod that serves `sessionId` since `now` (no longer made for a demand). */
export function assignedMetadata(sessionId: string, now: number): MetadataChange {
  return {
    labels: { [LABEL.state]: 'assigned', [LABEL.session]: sessionLabelValue(sessionId) },
    annotations: { [ANNOTATION.sessionId]: sessionId, [ANNOTATION.assignedAt]: String(now), [ANNOTATION.demandFor]: null },
  }
}

/** The labels and annotations of a cold pod nobody claimed, now an ordinary warm pod. */
export const WARM_METADATA: MetadataChange = { labels: { [LABEL.state]: 'warm' }, annotations: { [ANNOTATION.demandFor]: null } }

/** A pod's own NATS credential, in a Secret the pod owns (deleted with it); the pod's container waits for it. */
export function credentialsSecret(pod: { name: string; uid: string }, pool: string, namespace: string, creds: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: podCredentialsSecret(pod.name),
      namespace,
      labels: { [LABEL.managedBy]: MANAGED_BY, [LABEL.pool]: pool },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true }],
    },
    stringData: { [POD_CREDS_KEY]: creds },
  }
}

export interface SandboxPodsOptions {
  api: KubeApi
  config: ControllerConfig
  log: Logger
  caches: WorldCaches
  demands: PendingDemands
  stats: ControllerStats
  /** Asks for another pass soon (after a conflict). */
  soon: () => void
  /** Per-session credentials: each pod gets its own credential in a Secret. */
  assigner?: SessionAssigner | undefined
  /** Random bytes for pod names. */
  random?: ((bytes: number) => Buffer) | undefined
}

/** Creates sandbox pods (with per-session credentials, each with its credentials Secret). */
export class SandboxPods {
  readonly #api: KubeApi
  readonly #config: ControllerConfig
  readonly #log: Logger
  readonly #caches: WorldCaches
  readonly #demands: PendingDemands
  readonly #stats: ControllerStats
  readonly #soon: () => void
  readonly #assigner: SessionAssigner | undefined
  readonly #random: ((bytes: number) => Buffer) | undefined

  constructor(options: SandboxPodsOptions) {
    this.#api = options.api
    this.#config = options.config
    this.#log = options.log
    this.#caches = options.caches
    this.#demands = options.demands
    this.#stats = options.stats
    this.#soon = options.soon
    this.#assigner = options.assigner
    this.#random = options.random
  }

  /**
   * Creates a pod for `purpose`; false when that failed in a way worth a back-off. A cold pod's
   * demand is answered with it, or (per-session credentials) once its session is placed on it.
   */
  async create(purpose: PodPurpose, now: number): Promise<boolean> {
    const { pool } = this.#config
    const name = newPodName(pool, this.#random)
    const forget = this.#caches.created(name, purpose, now)
    const warmCreds = this.#assigner?.warmPod(name)
    const pod = buildSandboxPod({
      name,
      pool,
      namespace: this.#api.namespace,
      settings: this.#config.sandbox,
      purpose,
      credentials: warmCreds && { inboxPrefix: warmCreds.inboxPrefix },
    })
    try {
      const created = await this.#api.createPod(pod)
      if (warmCreds !== undefined)
        await this.#api.createSecret(credentialsSecret({ name, uid: created.metadata!.uid! }, pool, this.#api.namespace, warmCreds.creds))
    } catch (err) {
      forget()
      if (isConflict(err)) {
        this.#stats.conflicts++
        this.#soon()
        return true
      }
      this.#log.warn({ err, pod: name }, 'creating a sandbox pod failed')
      if (purpose.kind === 'cold')
        this.#demands.answer(purpose.sessionId, { ok: false, code: 'INTERNAL', message: `creating a pod failed: ${(err as Error).message.split('\n')[0]}` })
      return false
    }
    this.#stats.created++
    this.#log.info({ pod: name, purpose: purpose.kind, ...(purpose.kind === 'cold' && { session_id: purpose.sessionId }) }, 'sandbox pod created')
    if (purpose.kind === 'cold' && this.#assigner === undefined) this.#demands.answer(purpose.sessionId, { ok: true, pod: name, created: true })
    return true
  }
}
