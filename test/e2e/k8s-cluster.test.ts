/**
 * The real-cluster test: only part of the run when KUBECONFIG is set (the
 * `k8s-cluster` project in vitest.config.ts). It installs the chart into a fresh
 * namespace, with the bundled NATS, and runs one session through a gateway.
 *
 * Needs, besides KUBECONFIG: images built from Dockerfile.gateway and
 * Dockerfile.runner that the cluster can pull (AGENT_RUNTIME_GATEWAY_IMAGE and
 * AGENT_RUNTIME_RUNNER_IMAGE, `repository:tag`), and ANTHROPIC_API_KEY for
 * the agent CLI in the sandbox. A missing one fails the test with its name.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ANNOTATION, LABEL } from '../../controller/labels.ts'
import { kubectlBinary } from '../../scripts/helm.ts'
import { CHART, helm } from '../charts/render.ts'
import { until } from '../controller/harness.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const NAMESPACE = `ar-e2e-${process.pid}`
const RELEASE = 'ar'

function required(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`the real-cluster test needs ${name}`)
  return value
}

function image(name: string): { repository: string; tag: string } {
  const value = required(name)
  const at = value.lastIndexOf(':')
  return at > value.lastIndexOf('/') ? { repository: value.slice(0, at), tag: value.slice(at + 1) } : { repository: value, tag: 'latest' }
}

let core: CoreV1Api
let portForward: ChildProcess | undefined

beforeAll(async () => {
  const gateway = image('AGENT_RUNTIME_GATEWAY_IMAGE')
  const runner = image('AGENT_RUNTIME_RUNNER_IMAGE')
  const apiKey = required('ANTHROPIC_API_KEY')
  const config = new KubeConfig()
  config.loadFromDefault()
  core = config.makeApiClient(CoreV1Api)
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } })
  await core.createNamespacedSecret({ namespace: NAMESPACE, body: { metadata: { name: 'model' }, stringData: { ANTHROPIC_API_KEY: apiKey } } })
  const result = await helm([
    'install',
    RELEASE,
    CHART,
    '--namespace',
    NAMESPACE,
    '--wait',
    '--timeout',
    '10m',
    '--set',
    `image.gateway.repository=${gateway.repository}`,
    '--set',
    `image.gateway.tag=${gateway.tag}`,
    '--set',
    `image.runner.repository=${runner.repository}`,
    '--set',
    `image.runner.tag=${runner.tag}`,
    '--set',
    'nats.enabled=true',
    '--set',
    'secrets.modelApiKey.existingSecret=model',
    '--set',
    'sandbox.warmPool=1',
    '--set',
    'gateway.replicas=1',
    '--set',
    'controller.replicas=2',
  ])
  if (result.code !== 0) throw new Error(`helm install failed:\n${result.stderr}`)
})

afterAll(async () => {
  portForward?.kill()
  await helm(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait'])
  await core?.deleteNamespace({ name: NAMESPACE }).catch(() => {})
})

const sandboxPods = async () => (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${LABEL.component}=sandbox` })).items

describe('k8s - the chart on a real cluster', () => {
  test('the warm pool comes up, a session runs in its own pod, and the pool refills', async () => {
    await until(
      async () => (await sandboxPods()).some((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
      'a ready warm pod',
      300_000,
    )
    const kubectl = await kubectlBinary()
    portForward = spawn(kubectl, ['port-forward', '--namespace', NAMESPACE, `service/${RELEASE}-agent-runtime-gateway`, '18080:80'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    await new Promise<void>((resolve, reject) => {
      portForward!.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Forwarding from') && resolve())
      portForward!.once('exit', (code) => reject(new Error(`kubectl port-forward exited with ${code}`)))
    })
    const client = await WsClient.connect('ws://127.0.0.1:18080/ws/v1/agent')
    try {
      client.send({ type: 'execute', session_id: 'k8s-e2e', prompt: 'Reply with the single word: pong', request_id: 1 })
      const done = await client.next((m) => m.event === 'completed' || m.event === 'error', 300_000)
      expect(done.event).toBe('completed')
    } finally {
      await client.close()
    }
    const pods = await sandboxPods()
    const assigned = pods.filter((p) => p.metadata?.annotations?.[ANNOTATION.sessionId] === 'k8s-e2e')
    expect(assigned).toHaveLength(1)
    expect(assigned[0]!.spec?.automountServiceAccountToken).toBe(false)
    await until(async () => (await sandboxPods()).filter((p) => p.metadata?.labels?.[LABEL.state] === 'warm').length === 1, 'the pool refilled', 300_000)
  })
})
