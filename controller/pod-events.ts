import { randomBytes } from 'node:crypto'
import type { CoreV1Event } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Background } from './background.ts'
import type { Clock } from './clock.ts'
import type { KubeApi } from './kube/client.ts'
import { LABEL, MANAGED_BY } from './labels.ts'

export interface PodEventsOptions {
  api: KubeApi
  clock: Clock
  log: Logger
  /** This replica's name, the events' reporting instance. */
  identity: string
  /** The uid of a cached pod, for the event's involved object. */
  uidOf: (pod: string) => string | undefined
  background: Background
}

/** Kubernetes Events on sandbox pods, for `kubectl describe`; failures to record one only get logged. */
export class PodEvents {
  readonly #api: KubeApi
  readonly #clock: Clock
  readonly #log: Logger
  readonly #identity: string
  readonly #uidOf: (pod: string) => string | undefined
  readonly #background: Background

  constructor(options: PodEventsOptions) {
    this.#api = options.api
    this.#clock = options.clock
    this.#log = options.log
    this.#identity = options.identity
    this.#uidOf = options.uidOf
    this.#background = options.background
  }

  /** Records an event on `pod` in the background. */
  record(pod: string, reason: string, message: string, type: 'Normal' | 'Warning'): void {
    const namespace = this.#api.namespace
    const at = new Date(this.#clock.now())
    const event: CoreV1Event = {
      metadata: { name: `${pod}.${randomBytes(6).toString('hex')}`, namespace, labels: { [LABEL.managedBy]: MANAGED_BY } },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod, namespace, uid: this.#uidOf(pod) },
      reason,
      message,
      type,
      source: { component: MANAGED_BY },
      reportingComponent: MANAGED_BY,
      reportingInstance: this.#identity,
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    }
    this.#background.track(this.#api.createEvent(event).catch((err: unknown) => this.#log.debug({ err }, 'recording an event failed')))
  }
}
