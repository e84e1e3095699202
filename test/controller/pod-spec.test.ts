import { Pod } from 'kubernetes-models/v1'
import { describe, expect, test } from 'vitest'
import { ControllerConfigSchema, type ControllerConfigInput } from '../../controller/config.ts'
import { ANNOTATION, LABEL } from '../../controller/labels.ts'
import { buildSandboxPod, newPodName, type PodPurpose } from '../../controller/pod-spec.ts'

function build(sandbox: ControllerConfigInput['sandbox'] = {}, purpose: PodPurpose = { kind: 'warm' }) {
  const settings = ControllerConfigSchema.parse({ sandbox }).sandbox
  const pod = JSON.parse(JSON.stringify(buildSandboxPod({ name: 'pool-abcdefghij', pool: 'pool', namespace: 'ns', settings, purpose })))
  new Pod(pod).validate()
  return pod
}

describe('pod spec - security settings', () => {
  const pod = build()
  const spec = pod.spec
  const container = spec.containers[0]
  test('the pod mounts no service-account token, shares no host namespace, never restarts', () => {
    expect(spec.automountServiceAccountToken).toBe(false)
    expect(spec.enableServiceLinks).toBe(false)
    expect(spec.hostNetwork).toBe(false)
    expect(spec.hostPID).toBe(false)
    expect(spec.hostIPC).toBe(false)
    expect(spec.restartPolicy).toBe('Never')
    expect(spec.runtimeClassName).toBeUndefined()
  })
  test('the pod runs as a non-root user with seccomp RuntimeDefault', () => {
    expect(spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      fsGroup: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    })
  })
  test('the container drops every capability, cannot escalate, and has a read-only root', () => {
    expect(spec.containers).toHaveLength(1)
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    })
    expect(container.securityContext.capabilities.add).toBeUndefined()
  })
  test('only the sandbox, HOME and /tmp are writable, each an emptyDir with a size limit', () => {
    expect(container.volumeMounts).toEqual([
      { name: 'sandbox', mountPath: '/sandbox' },
      { name: 'home', mountPath: '/home/agent' },
      { name: 'tmp', mountPath: '/tmp' },
    ])
    expect(spec.volumes).toEqual([
      { name: 'sandbox', emptyDir: { sizeLimit: '10Gi' } },
      { name: 'home', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
    ])
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: 'HOME', value: '/home/agent' },
        { name: 'TMPDIR', value: '/tmp' },
      ]),
    )
    // The CLI's conversations live on the sandbox volume, so a re-placed session can resume where that volume is shared.
    expect(container.env).toContainEqual({ name: 'CLAUDE_CONFIG_DIR', value: '/sandbox/claude' })
    expect(container.workingDir).toBe('/sandbox')
  })
  test('requests and limits are set', () => {
    expect(container.resources).toEqual({ requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } })
  })
  test('the runner knows its pod name as RUNNER_ID (downward API)', () => {
    expect(container.env[0]).toEqual({ name: 'RUNNER_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } })
    expect(container.args).toEqual(['runner'])
  })
  test('labels place the pod in its pool as warm; the NetworkPolicy selects component=sandbox', () => {
    expect(pod.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'agent-runtime',
      [LABEL.component]: 'sandbox',
      [LABEL.managedBy]: 'agent-runtime-controller',
      [LABEL.pool]: 'pool',
      [LABEL.state]: 'warm',
    })
    expect(pod.metadata.annotations).toEqual({})
  })
})

describe('pod spec - options', () => {
  test.each([
    ['the default: above the runner drain of 30 s + 3 s', undefined, 43],
    ['whole seconds', '90s', 90],
    ['a Go duration', '1m30s', 90],
    ['part of a second rounds up', '1500ms', 2],
    ['0: killed at once', '0', 0],
  ] as const)('termination grace period: %s', (_name, value, seconds) => {
    expect(build(value === undefined ? {} : { termination_grace_period: value }).spec.terminationGracePeriodSeconds).toBe(seconds)
  })
  test('a cold pod names the session it was made for', () => {
    const pod = build({}, { kind: 'cold', sessionId: 'a session/with odd chars' })
    expect(pod.metadata.labels[LABEL.state]).toBe('cold')
    expect(pod.metadata.annotations[ANNOTATION.demandFor]).toBe('a session/with odd chars')
  })
  test('runtime class, service account, pull secrets, node selector, tolerations, extra labels', () => {
    const pod = build({
      runtime_class_name: 'gvisor',
      service_account_name: 'sandbox',
      image_pull_secrets: ['regcred'],
      node_selector: { pool: 'sandboxes' },
      tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }],
      labels: { team: 'agents' },
      annotations: { note: 'x' },
    })
    expect(pod.spec.runtimeClassName).toBe('gvisor')
    expect(pod.spec.serviceAccountName).toBe('sandbox')
    expect(pod.spec.automountServiceAccountToken).toBe(false)
    expect(pod.spec.imagePullSecrets).toEqual([{ name: 'regcred' }])
    expect(pod.spec.nodeSelector).toEqual({ pool: 'sandboxes' })
    expect(pod.spec.tolerations).toEqual([{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }])
    expect(pod.metadata.labels.team).toBe('agents')
    expect(pod.metadata.annotations.note).toBe('x')
  })
  test('extra labels cannot take the pool out of its selector', () => {
    const pod = build({ labels: { [LABEL.component]: 'other', [LABEL.pool]: 'other' } })
    expect(pod.metadata.labels[LABEL.component]).toBe('sandbox')
    expect(pod.metadata.labels[LABEL.pool]).toBe('pool')
  })
  test.each([
    [
      'ephemeral: a PVC per pod',
      { type: 'ephemeral', size: '20Gi', storage_class: 'fast' } as const,
      {
        name: 'sandbox',
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { labels: { [LABEL.component]: 'sandbox' } },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } }, storageClassName: 'fast' },
          },
        },
      },
    ],
    [
      'persistentVolumeClaim: a shared claim',
      { type: 'persistentVolumeClaim', claim_name: 'shared' } as const,
      { name: 'sandbox', persistentVolumeClaim: { claimName: 'shared' } },
    ],
    ['emptyDir with its size limit', { type: 'emptyDir', size_limit: '3Gi' } as const, { name: 'sandbox', emptyDir: { sizeLimit: '3Gi' } }],
  ])('storage %s', (_name, storage, volume) => {
    expect(build({ storage }).spec.volumes[0]).toEqual(volume)
  })
  test('config map, secrets as env, readiness probe', () => {
    const pod = build({
      config_map: 'ar-config',
      secret_env: [{ name: 'ANTHROPIC_API_KEY', secret: 'model', key: 'key' }],
      readiness: { port: 9090 },
      env: { NATS_URL: 'nats://n:4222' },
    })
    const c = pod.spec.containers[0]
    expect(c.args).toEqual(['runner', '--config', '/etc/agent-runtime/config.yaml'])
    expect(c.volumeMounts).toContainEqual({ name: 'config', mountPath: '/etc/agent-runtime', readOnly: true })
    expect(pod.spec.volumes).toContainEqual({ name: 'config', configMap: { name: 'ar-config' } })
    expect(c.env).toContainEqual({ name: 'ANTHROPIC_API_KEY', valueFrom: { secretKeyRef: { name: 'model', key: 'key' } } })
    expect(c.env).toContainEqual({ name: 'NATS_URL', value: 'nats://n:4222' })
    expect(c.readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 9090 }, periodSeconds: 1, failureThreshold: 3 })
  })
  test('pod names are DNS labels of the pool plus 10 characters', () => {
    const names = new Set(Array.from({ length: 200 }, () => newPodName('pool')))
    expect(names.size).toBe(200)
    for (const n of names) expect(n).toMatch(/^pool-[a-z0-9]{10}$/)
    expect(newPodName('p', (size) => Buffer.alloc(size, 37))).toBe('p-1111111111')
  })
})
