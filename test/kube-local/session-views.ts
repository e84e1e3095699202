import type { V1Pod } from '@kubernetes/client-node'
import { LABEL, poolSelector } from '../../controller/labels.ts'
import type { State } from '../../state/mod.ts'
import type { ServiceProcess } from '../fixtures/service-process.ts'
import type { WsClient } from '../fixtures/ws-client.ts'
import type { Clients } from './kube-local.ts'
import type { PodRunners } from './pod-runners.ts'

/** What a session test on the real API server has running (set in its beforeAll). */
export interface SessionCluster {
  api: Clients
  namespace: string
  pool: string
  state: State
  controller: ServiceProcess
  gateway: ServiceProcess
  pods: PodRunners
  client: WsClient
}

/** What the session tests read off the cluster; `cluster` is asked at each call (the pieces start in beforeAll). */
export function sessionViews(cluster: () => SessionCluster) {
  const live = (p: V1Pod) => p.metadata?.deletionTimestamp === undefined
  async function listPods(): Promise<V1Pod[]> {
    const { api, namespace, pool } = cluster()
    return (await api.core.listNamespacedPod({ namespace, labelSelector: poolSelector(pool) })).items.filter(live)
  }
  /** Every process's output, for a failure's message. */
  const output = () => {
    const { controller, gateway, pods } = cluster()
    return `--- controller\n${controller.output()}\n--- gateway\n${gateway.output()}\n${pods.output()}\n${pods.errors.map(String).join('\n')}`
  }
  return {
    output,
    /** Warm pods whose runner process runs (what a placement needs). */
    async warmWithRunner(): Promise<string[]> {
      const running = new Set(cluster().pods.running())
      return (await listPods()).filter((p) => p.metadata?.labels?.[LABEL.state] === 'warm' && running.has(p.metadata!.name!)).map((p) => p.metadata!.name!)
    },
    async ownerOf(sessionId: string): Promise<string | undefined> {
      return (await cluster().state.registry.get(sessionId))?.value.owner
    },
    /** An event of one turn (by its request id), received or to come. */
    turnEvent(sessionId: string, requestId: string | number, match: (event: string) => boolean): Promise<Record<string, unknown>> {
      return cluster()
        .client.next((msg) => msg.session_id === sessionId && msg.request_id === requestId && typeof msg.event === 'string' && match(msg.event), 30_000)
        .catch((err: Error) => {
          throw new Error(`${err.message}\n${output()}`)
        })
    },
  }
}
