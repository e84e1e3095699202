import { randomBytes } from 'node:crypto'
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node'
import type { SandboxSettings } from './config.ts'
import { ANNOTATION, COMPONENT, LABEL, MANAGED_BY } from './labels.ts'

/** Where the sandbox volumes are mounted in the runner container. */
export const SANDBOX_PATHS = {
  sandbox: '/sandbox',
  home: '/home/agent',
  tmp: '/tmp',
  config: '/etc/agent-runtime',
  nats: '/var/run/agent-runtime/nats',
} as const

/** The key of a pod's own NATS credential in its Secret (per-session credentials). */
export const POD_CREDS_KEY = 'pod.creds'

/** The Secret holding a pod's own NATS credential (per-session credentials). */
export const podCredentialsSecret = (pod: string) => `${pod}-nats`

export const RUNNER_CONTAINER = 'runner'

/** What one pod is made for: the warm pool, or one session's demand (a cold pod). */
export type PodPurpose = { kind: 'warm' } | { kind: 'cold'; sessionId: string }

/** A fresh pod name: `<pool>-<10 random base-36 characters>` (a DNS label: the runner's RUNNER_ID). */
export function newPodName(pool: string, random: (bytes: number) => Buffer = randomBytes): string {
  const suffix = [...random(10)].map((byte) => (byte % 36).toString(36)).join('')
  return `${pool}-${suffix}`
}

/**
 * The sandbox pod: one runner serving at most one session, locked down by
 * default (non-root, no capabilities, no privilege escalation, seccomp
 * RuntimeDefault, read-only root, no service-account token) with writable
 * emptyDirs only for the sandbox, HOME and /tmp. Pure: the same input gives
 * the same pod.
 */
export function buildSandboxPod(options: {
  name: string
  pool: string
  namespace: string
  settings: SandboxSettings
  purpose: PodPurpose
  /**
   * Per-session credentials: the pod's own NATS credential comes from its Secret (mounted, read
   * only, hidden from its sessions by the runner's sandbox) with its own reply inbox; the runner
   * waits for the controller to assign it a session.
   */
  credentials?: { inboxPrefix: string } | undefined
}): V1Pod {
  const { name, pool, namespace, settings, purpose, credentials } = options
  const uid = settings.run_as_user
  const configArgs = settings.config_map === undefined ? [] : ['--config', `${SANDBOX_PATHS.config}/config.yaml`]
  const container: V1Container = {
    name: RUNNER_CONTAINER,
    image: settings.image,
    imagePullPolicy: settings.image_pull_policy,
    args: ['runner', ...configArgs],
    workingDir: SANDBOX_PATHS.sandbox,
    env: [
      // The runner's identity in the session registry is its pod's name.
      { name: 'RUNNER_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'HOME', value: SANDBOX_PATHS.home },
      { name: 'TMPDIR', value: SANDBOX_PATHS.tmp },
      // The CLI's conversations beside the sandboxes and markers: on a shared volume, a session
      // placed on another pod resumes its conversation there.
      { name: 'CLAUDE_CONFIG_DIR', value: `${SANDBOX_PATHS.sandbox}/claude` },
      ...Object.entries(settings.env).map(([envName, value]) => ({ name: envName, value })),
      ...settings.secret_env.map((s) => ({ name: s.name, valueFrom: { secretKeyRef: { name: s.secret, key: s.key } } })),
      ...(credentials === undefined
        ? []
        : [
            { name: 'NATS_CREDS', value: `${SANDBOX_PATHS.nats}/${POD_CREDS_KEY}` },
            { name: 'NATS_INBOX_PREFIX', value: credentials.inboxPrefix },
            { name: 'RUNNER_PLACEMENT', value: 'controller' },
          ]),
    ],
    resources: { requests: { ...settings.resources.requests }, limits: { ...settings.resources.limits } },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: uid,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [
      { name: 'sandbox', mountPath: SANDBOX_PATHS.sandbox },
      { name: 'home', mountPath: SANDBOX_PATHS.home },
      { name: 'tmp', mountPath: SANDBOX_PATHS.tmp },
      ...(settings.config_map === undefined ? [] : [{ name: 'config', mountPath: SANDBOX_PATHS.config, readOnly: true }]),
      ...(credentials === undefined ? [] : [{ name: 'nats', mountPath: SANDBOX_PATHS.nats, readOnly: true }]),
    ],
    ...(settings.readiness && {
      // Named, so a PodMonitor scrapes the runner's /metrics on the same port.
      ports: [{ name: 'http', containerPort: settings.readiness.port, protocol: 'TCP' }],
      readinessProbe: { httpGet: { path: settings.readiness.path, port: settings.readiness.port }, periodSeconds: 1, failureThreshold: 3 },
    }),
  }
  const volumes: V1Volume[] = [
    sandboxVolume(settings.storage),
    { name: 'home', emptyDir: { sizeLimit: settings.home_size_limit } },
    { name: 'tmp', emptyDir: { sizeLimit: settings.tmp_size_limit } },
    ...(settings.config_map === undefined ? [] : [{ name: 'config', configMap: { name: settings.config_map } }]),
    // Owner-only; the kubelet waits for the Secret, which the controller makes right after the pod.
    ...(credentials === undefined ? [] : [{ name: 'nats', secret: { secretName: podCredentialsSecret(name), defaultMode: 0o400 } }]),
  ]
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: {
        ...settings.labels,
        'app.kubernetes.io/name': 'agent-runtime',
        [LABEL.component]: COMPONENT,
        [LABEL.managedBy]: MANAGED_BY,
        [LABEL.pool]: pool,
        [LABEL.state]: purpose.kind,
      },
      annotations: { ...settings.annotations, ...(purpose.kind === 'cold' && { [ANNOTATION.demandFor]: purpose.sessionId }) },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      ...(settings.service_account_name !== undefined && { serviceAccountName: settings.service_account_name }),
      ...(settings.runtime_class_name !== undefined && { runtimeClassName: settings.runtime_class_name }),
      terminationGracePeriodSeconds: Math.ceil(settings.termination_grace_period / 1000),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: uid,
        fsGroup: uid,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      ...(settings.image_pull_secrets.length > 0 && { imagePullSecrets: settings.image_pull_secrets.map((secret) => ({ name: secret })) }),
      ...(Object.keys(settings.node_selector).length > 0 && { nodeSelector: { ...settings.node_selector } }),
      ...(settings.tolerations.length > 0 && { tolerations: structuredClone(settings.tolerations) }),
      containers: [container],
      volumes,
    },
  }
}

function sandboxVolume(storage: SandboxSettings['storage']): V1Volume {
  switch (storage.type) {
    case 'emptyDir':
      return { name: 'sandbox', emptyDir: { sizeLimit: storage.size_limit } }
    case 'ephemeral':
      return {
        name: 'sandbox',
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { labels: { [LABEL.component]: COMPONENT } },
            spec: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: storage.size } },
              ...(storage.storage_class !== undefined && { storageClassName: storage.storage_class }),
            },
          },
        },
      }
    case 'persistentVolumeClaim':
      return { name: 'sandbox', persistentVolumeClaim: { claimName: storage.claim_name } }
  }
}
