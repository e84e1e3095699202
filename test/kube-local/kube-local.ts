/**
 * The local control plane of scripts/kube-local.sh in tests: what the global
 * setup provides, admin and ServiceAccount clients, restricted namespaces,
 * helm against it.
 */
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { AppsV1Api, CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { beforeEach, inject } from 'vitest'
import { parse, stringify } from 'yaml'
import { helm } from '../charts/render.ts'
import { until as untilHolds } from '../fixtures/until.ts'

export const KUBE_LOCAL_SCRIPT = fileURLToPath(new URL('../../scripts/kube-local.sh', import.meta.url))

/** What the global setup hands the test files: a kubeconfig, or why there is none. */
export interface KubeLocal {
  kubeconfig?: string
  bin?: string
  error?: string
  state: string
  upSeconds: number
}

/**
 * The running control plane, for one test file. When the bring-up failed it
 * returns undefined and makes every test of the file fail with the bring-up's
 * error (a beforeEach that throws), so each counts as failed, none as skipped.
 */
export function kubeLocalForFile(): (KubeLocal & { kubeconfig: string }) | undefined {
  const provided = inject('kubeLocal')
  const error =
    provided === undefined
      ? 'no kubeLocal: run this file in the vitest project k8s (its global setup starts the control plane)'
      : (provided.error ?? (provided.kubeconfig === undefined ? 'the control plane did not come up' : undefined))
  if (error === undefined) return provided as KubeLocal & { kubeconfig: string }
  beforeEach(() => {
    throw new Error(error)
  })
  return undefined
}

export interface Clients {
  config: KubeConfig
  core: CoreV1Api
  apps: AppsV1Api
  coordination: CoordinationV1Api
}

export function clients(config: KubeConfig): Clients {
  return { config, core: config.makeApiClient(CoreV1Api), apps: config.makeApiClient(AppsV1Api), coordination: config.makeApiClient(CoordinationV1Api) }
}

/** Clients with the control plane's admin token (system:masters). */
export function admin(kubeconfig: string): Clients {
  const config = new KubeConfig()
  config.loadFromFile(kubeconfig)
  return clients(config)
}

/** The labels that make the API server enforce the `restricted` Pod Security Standard in a namespace. */
export const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
} as const

/** A fresh namespace enforcing `restricted`, usable once the controller manager gave it its default ServiceAccount. */
export async function restrictedNamespace(api: Clients, name: string): Promise<void> {
  await api.core.createNamespace({ body: { metadata: { name, labels: { ...RESTRICTED } } } })
  await until(
    async () => Boolean(await api.core.readNamespacedServiceAccount({ name: 'default', namespace: name })),
    `the default ServiceAccount of namespace ${name}`,
    30_000,
  )
}

/**
 * A kubeconfig file that authenticates as a ServiceAccount (a TokenRequest
 * token), so the API server applies that account's RBAC, not the admin's.
 */
export async function serviceAccountKubeconfig(api: Clients, namespace: string, serviceAccount: string, file: string): Promise<string> {
  const request = await api.core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { expirationSeconds: 3600, audiences: [] } },
  })
  const token = request.status?.token
  if (!token) throw new Error(`no token for ServiceAccount ${namespace}/${serviceAccount}`)
  const cluster = api.config.getCurrentCluster()!
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kube-local', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: serviceAccount, context: { cluster: 'kube-local', user: serviceAccount, namespace } }],
      'current-context': serviceAccount,
    }),
    { mode: 0o600 },
  )
  return file
}

/** helm with the control plane's kubeconfig; throws with helm's message when it fails. */
export async function helmOn(kubeconfig: string, args: string[]): Promise<string> {
  const result = await helm([...args, '--kubeconfig', kubeconfig])
  if (result.code !== 0) throw new Error(`helm ${args.slice(0, 2).join(' ')} failed:\n${result.stderr}`)
  return result.stdout
}

/** The shared `until`, polling every 200 ms: each check here is a request to the API server. */
export function until(check: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs: number, intervalMs = 200): Promise<void> {
  return untilHolds(check, what, timeoutMs, intervalMs)
}

/**
 * The chart's service config (its ConfigMap's `config.yaml`), pointed at a test's NATS and
 * loopback: any free port for the gateway and the controller's probe server (the chart's are a pod's own).
 */
export function chartConfig(configYaml: string, natsUrl: string, prefix: string): Record<string, any> {
  const config = parse(configYaml)
  config.nats = { ...config.nats, url: natsUrl, prefix }
  config.server = { ...config.server, host: '127.0.0.1', port: 0 }
  config.controller = { ...config.controller, http_port: 0 }
  config.log = { level: 'info' }
  return config
}
