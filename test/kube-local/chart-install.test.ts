/**
 * `helm install` of the chart on a real API server (scripts/kube-local.sh),
 * into namespaces enforcing the `restricted` Pod Security Standard: with the
 * default values and with ci/production-values.yaml. The API server validates
 * every object, PodSecurity admission checks every pod the workloads make, and
 * kwok makes the pods Running and Ready (no images are pulled, nothing runs).
 */
import { existsSync } from 'node:fs'
import type { V1Pod } from '@kubernetes/client-node'
import { ApiextensionsV1Api, PolicyV1Api } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { CHART, PRODUCTION_VALUES } from '../charts/render.ts'
import { admin, helmOn, kubeLocalForFile, restrictedNamespace, until, type Clients } from './kube-local.ts'

let kubeconfig: string
let api: Clients
const namespaces: string[] = []

const cluster = kubeLocalForFile()

beforeAll(() => {
  if (cluster === undefined) return
  kubeconfig = cluster.kubeconfig
  api = admin(kubeconfig)
})

afterAll(async () => {
  for (const namespace of namespaces) await api?.core.deleteNamespace({ name: namespace }).catch(() => {})
})

async function install(namespace: string, args: string[]): Promise<void> {
  await restrictedNamespace(api, namespace)
  namespaces.push(namespace)
  await helmOn(kubeconfig, ['install', 'ar', CHART, '--namespace', namespace, ...args])
}

/** Events that say a controller could not make a pod (PodSecurity admission refuses at pod creation). */
async function refusals(namespace: string): Promise<string[]> {
  const events = await api.core.listNamespacedEvent({ namespace })
  return events.items.filter((e) => e.reason === 'FailedCreate').map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}: ${e.message}`)
}

const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true

describe('k8s - helm install on a real API server, PodSecurity restricted', () => {
  test('default values: installs, every workload becomes available, no pod refused', async () => {
    await install('ar-default', ['--wait', '--timeout', '3m'])
    const deployments = (await api.apps.listNamespacedDeployment({ namespace: 'ar-default' })).items
    expect(deployments.map((d) => d.metadata!.name).sort()).toEqual(['ar-agent-runtime-controller', 'ar-agent-runtime-gateway'])
    for (const d of deployments) expect(d.status?.availableReplicas, d.metadata!.name).toBe(d.spec?.replicas)
    const pods = (await api.core.listNamespacedPod({ namespace: 'ar-default' })).items
    expect(pods.length).toBe(4)
    expect(pods.every(ready)).toBe(true)
    expect(await refusals('ar-default')).toEqual([])
  })

  test('default values: helm test runs its hook pod (admitted under restricted; kwok ends it, its check does not run here)', async () => {
    const out = await helmOn(kubeconfig, ['test', 'ar', '--namespace', 'ar-default', '--timeout', '1m'])
    expect(out).toMatch(/ar-agent-runtime-test-gateway[\s\S]*Succeeded/)
  })

  test('default values: the PodDisruptionBudgets select the running pods', async () => {
    const policy = api.config.makeApiClient(PolicyV1Api)
    const budgets = (await policy.listNamespacedPodDisruptionBudget({ namespace: 'ar-default' })).items
    expect(budgets.map((b) => b.metadata!.name).sort()).toEqual(['ar-agent-runtime-controller', 'ar-agent-runtime-gateway'])
    await until(
      async () => {
        const now = (await policy.listNamespacedPodDisruptionBudget({ namespace: 'ar-default' })).items
        return now.every((b) => b.status?.currentHealthy === 2 && (b.status?.disruptionsAllowed ?? 0) >= 1)
      },
      'both budgets see 2 healthy pods and allow a disruption',
      30_000,
    )
  })

  test('ci/production-values.yaml: every object is accepted and every workload makes its pods', async () => {
    expect(existsSync(PRODUCTION_VALUES)).toBe(true)
    // The production values turn on a ServiceMonitor: its CRD, as the Prometheus Operator installs it (schema left open).
    const crds = api.config.makeApiClient(ApiextensionsV1Api)
    await crds
      .createCustomResourceDefinition({
        body: {
          metadata: { name: 'servicemonitors.monitoring.coreos.com' },
          spec: {
            group: 'monitoring.coreos.com',
            names: { kind: 'ServiceMonitor', listKind: 'ServiceMonitorList', plural: 'servicemonitors', singular: 'servicemonitor' },
            scope: 'Namespaced',
            versions: [
              { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } },
            ],
          },
        },
      })
      .catch((err: { code?: number }) => {
        if (err.code !== 409) throw err
      })
    await until(
      async () =>
        (await crds.readCustomResourceDefinition({ name: 'servicemonitors.monitoring.coreos.com' })).status?.conditions?.some(
          (c) => c.type === 'Established' && c.status === 'True',
        ) === true,
      'the CRD established',
      20_000,
    )
    // No --wait: the NATS StatefulSet's volumes have no provisioner here, so its pods stay Pending (unschedulable), as they should.
    await install('ar-production', ['-f', PRODUCTION_VALUES])
    const namespace = 'ar-production'
    // Every Deployment and StatefulSet made all its pods (a pod PodSecurity refuses is never made).
    let seen = ''
    await until(
      async () => {
        const workloads = [
          ...(await api.apps.listNamespacedDeployment({ namespace })).items,
          ...(await api.apps.listNamespacedStatefulSet({ namespace })).items,
        ]
        seen = workloads.map((w) => `${w.kind ?? ''}${w.metadata!.name}: ${w.status?.replicas ?? 0}/${w.spec?.replicas}`).join(', ')
        return workloads.length === 3 && workloads.every((w) => (w.status?.replicas ?? 0) === w.spec?.replicas)
      },
      () => `every workload to make its pods (${seen})`,
      45_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; refused: ${JSON.stringify(await refusals(namespace), null, 1)}`)
    })
    expect(await refusals(namespace)).toEqual([])
    // The HorizontalPodAutoscaler (minReplicas 3) scales the gateways up within its 15 s resync.
    await until(
      async () => {
        const gateways = (await api.core.listNamespacedPod({ namespace, labelSelector: 'app.kubernetes.io/component=gateway' })).items
        return gateways.length >= 3 && gateways.every(ready)
      },
      '3 ready gateways',
      45_000,
    )
    expect(await refusals(namespace)).toEqual([])
    // The bundled NATS: admitted (the chart gives it a restricted security context), Pending for want of volumes.
    const nats = (await api.core.listNamespacedPod({ namespace, labelSelector: 'app.kubernetes.io/name=nats' })).items
    expect(nats).toHaveLength(3)
    expect(nats.every((p) => p.spec?.securityContext?.runAsNonRoot === true)).toBe(true)
  }, 120_000)
})
