import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type CoreV1Event,
  type V1Lease,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node'

/**
 * The narrow Kubernetes API the controller uses: pods, leases, events and
 * (with per-session credentials) creating Secrets in one namespace (what the chart's Role grants, nothing more). Built on the
 * real `@kubernetes/client-node`; tests point it at test/fakes/kube-api.ts.
 */
export interface KubeApi {
  readonly namespace: string
  listPods(labelSelector: string): Promise<{ items: V1Pod[]; resourceVersion: string }>
  /** Streams pod changes after `resourceVersion`; `onDone` fires once when the stream ends for any reason. */
  watchPods(labelSelector: string, resourceVersion: string, onEvent: (event: WatchEvent) => void, onDone: (err: unknown) => void): Promise<{ abort(): void }>
  createPod(pod: V1Pod): Promise<V1Pod>
  /** Merges labels and annotations (null removes one), only if the pod is still at `resourceVersion` (409 otherwise). */
  patchPodMetadata(name: string, resourceVersion: string, change: MetadataChange): Promise<V1Pod>
  /** Deletes a pod; `false` when it was already gone (404). */
  deletePod(name: string): Promise<boolean>
  getLease(name: string): Promise<V1Lease | undefined>
  createLease(lease: V1Lease): Promise<V1Lease>
  /** Replaces a lease; 409 when its resourceVersion is stale. */
  replaceLease(lease: V1Lease): Promise<V1Lease>
  createEvent(event: CoreV1Event): Promise<void>
  /** Creates a Secret (per-session credentials: a pod's own NATS credential, owned by the pod). */
  createSecret(secret: V1Secret): Promise<void>
}

export interface MetadataChange {
  labels?: Record<string, string | null>
  annotations?: Record<string, string | null>
}

/** One watch line: ADDED, MODIFIED, DELETED, BOOKMARK, or ERROR (then `object` is a Status). */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'
  object: V1Pod & { code?: number; reason?: string }
}

/** The HTTP status of a failed API call, or undefined when it was not an HTTP answer. */
export function apiStatus(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code
  const code = (err as { statusCode?: unknown; code?: unknown } | null)?.statusCode
  return typeof code === 'number' ? code : undefined
}

export const isConflict = (err: unknown) => apiStatus(err) === 409
export const isNotFound = (err: unknown) => apiStatus(err) === 404
export const isGone = (err: unknown) => apiStatus(err) === 410

/** KubeApi over `@kubernetes/client-node`. */
export class ClientNodeKubeApi implements KubeApi {
  readonly namespace: string
  readonly #core: CoreV1Api
  readonly #coordination: CoordinationV1Api
  readonly #watch: Watch

  constructor(config: KubeConfig, namespace: string) {
    this.namespace = namespace
    this.#core = config.makeApiClient(CoreV1Api)
    this.#coordination = config.makeApiClient(CoordinationV1Api)
    this.#watch = new Watch(config)
  }

  async listPods(labelSelector: string) {
    const list = await this.#core.listNamespacedPod({ namespace: this.namespace, labelSelector })
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' }
  }

  async watchPods(labelSelector: string, resourceVersion: string, onEvent: (event: WatchEvent) => void, onDone: (err: unknown) => void) {
    const controller = await this.#watch.watch(
      `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/pods`,
      { labelSelector, resourceVersion, allowWatchBookmarks: true },
      (type, object) => onEvent({ type: type as WatchEvent['type'], object }),
      onDone,
    )
    return { abort: () => controller.abort() }
  }

  createPod(pod: V1Pod) {
    return this.#core.createNamespacedPod({ namespace: this.namespace, body: pod })
  }

  patchPodMetadata(name: string, resourceVersion: string, change: MetadataChange) {
    const body = { metadata: { resourceVersion, ...change } }
    return this.#core.patchNamespacedPod({ namespace: this.namespace, name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
  }

  async deletePod(name: string) {
    try {
      await this.#core.deleteNamespacedPod({ namespace: this.namespace, name })
      return true
    } catch (err) {
      if (isNotFound(err)) return false
      throw err
    }
  }

  async getLease(name: string) {
    try {
      return await this.#coordination.readNamespacedLease({ namespace: this.namespace, name })
    } catch (err) {
      if (isNotFound(err)) return undefined
      throw err
    }
  }

  createLease(lease: V1Lease) {
    return this.#coordination.createNamespacedLease({ namespace: this.namespace, body: lease })
  }

  replaceLease(lease: V1Lease) {
    return this.#coordination.replaceNamespacedLease({ namespace: this.namespace, name: lease.metadata!.name!, body: lease })
  }

  async createEvent(event: CoreV1Event) {
    await this.#core.createNamespacedEvent({ namespace: this.namespace, body: event })
  }

  async createSecret(secret: V1Secret) {
    await this.#core.createNamespacedSecret({ namespace: this.namespace, body: secret })
  }
}
