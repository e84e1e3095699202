/**
 * A fake kubelet for the fake API server: it "runs" sandbox pods by writing
 * their status (Running and Ready, Failed/Evicted, gone), as a node would.
 * With `autoReady` every new pod becomes ready as soon as it is created.
 */
import type { FakeKubeApi } from './kube-api.ts'

export class FakeKubelet {
  readonly #api: FakeKubeApi
  readonly #namespace: string
  readonly #now: () => number
  readonly #stop: () => void
  autoReady: boolean

  constructor(api: FakeKubeApi, namespace: string, options: { autoReady?: boolean; now?: () => number } = {}) {
    this.#api = api
    this.#namespace = namespace
    this.#now = options.now ?? Date.now
    this.autoReady = options.autoReady ?? true
    this.#stop = api.onChange((type, resource, object) => {
      if (type === 'ADDED' && resource === 'pods' && object.metadata.namespace === namespace && this.autoReady) {
        // After the create has answered, as a real node would.
        queueMicrotask(() => this.ready(object.metadata.name))
      }
    })
  }

  stop(): void {
    this.#stop()
  }

  /** The pod's container runs and its readiness probe passes. */
  ready(name: string): void {
    const at = new Date(this.#now()).toISOString()
    this.#api.mutate('pods', this.#namespace, name, (pod) => {
      pod.status = {
        phase: 'Running',
        podIP: '10.0.0.' + (name.length % 250),
        startTime: at,
        conditions: [
          { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
          { type: 'Ready', status: 'True', lastTransitionTime: at },
        ],
        containerStatuses: [
          {
            name: 'runner',
            ready: true,
            restartCount: 0,
            image: pod.spec.containers[0].image,
            imageID: '',
            started: true,
            state: { running: { startedAt: at } },
          },
        ],
      }
    })
  }

  /** The pod stays Pending (image pull back-off, say). */
  stuck(name: string): void {
    this.#api.mutate('pods', this.#namespace, name, (pod) => {
      pod.status = {
        phase: 'Pending',
        reason: 'ImagePullBackOff',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(this.#now()).toISOString() }],
      }
    })
  }

  /** The kubelet evicts the pod (node pressure): phase Failed, reason Evicted. */
  evict(name: string): void {
    this.#api.mutate('pods', this.#namespace, name, (pod) => {
      pod.status = {
        ...pod.status,
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
        conditions: [{ type: 'Ready', status: 'False' }],
      }
    })
  }

  /** The pod disappears at once (node lost, force delete). */
  vanish(name: string): void {
    this.#api.remove('pods', this.#namespace, name)
  }

  /** Finishes a graceful deletion. */
  finalize(name: string): void {
    this.#api.remove('pods', this.#namespace, name)
  }
}
