/**
 * `agent-runtime controller` as users run it: a separate process with a
 * kubeconfig (pointing at the fake API server), real NATS with the JetStream
 * session registry, demand over NATS from a "gateway" in this process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { stringify } from 'yaml'
import { NatsBus } from '../../bus/mod.ts'
import { resolveConfig } from '../../service/config/mod.ts'
import { emptyStats } from '../../contract/stats.ts'
import { requestColdPod } from '../../gateway/cold-start.ts'
import { ANNOTATION, LABEL } from '../../controller/labels.ts'
import { openServiceState } from '../../service/state.ts'
import type { State } from '../../state/mod.ts'
import { until } from '../controller/harness.ts'
import { FakeKubeApi } from '../fakes/kube-api.ts'
import { FakeKubelet } from '../fakes/kubelet.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'

const NS = 'sandboxes'
let dir: string
let nats: NatsFixture
let kube: FakeKubeApi
let kubelet: FakeKubelet
let controller: ServiceProcess
let bus: NatsBus
let state: State
const prefix = `ctl${process.pid}`

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ar-controller-'))
  nats = await startNats()
  kube = await FakeKubeApi.start()
  kubelet = new FakeKubelet(kube, NS)
  const kubeconfig = path.join(dir, 'kubeconfig')
  await writeFile(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: kube.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'fake', user: { token: 'not-checked' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace: NS } }],
      'current-context': 'fake',
    }),
  )
  const config = { nats: { url: nats.url, prefix }, state: { storage: 'memory' }, controller: { warm_pool: 2, pool: 'e2e' }, log: { level: 'info' } }
  controller = await startServiceProcess('controller', config, dir, { KUBECONFIG: kubeconfig, POD_NAME: 'controller-e2e-0' })
  bus = await NatsBus.connect(nats.url, { name: 'e2e-gateway' })
  state = await openServiceState(bus, resolveConfig(config, {}), pino({ level: 'silent' }))
})

afterAll(async () => {
  await controller?.stop()
  await state?.close()
  await bus?.close()
  kubelet?.stop()
  await kube?.close()
  await nats?.stop()
  await rm(dir, { recursive: true, force: true })
})

const warm = () => kube.list('pods', NS).filter((p) => p.metadata.labels[LABEL.state] === 'warm')

describe('controller process - against the fake cluster and real NATS', () => {
  test('takes the lease and fills the warm pool', async () => {
    await until(() => warm().length === 2, `two warm pods\n${controller.output()}`, 15_000)
    expect(kube.get('leases', NS, 'agent-runtime-controller')!.spec.holderIdentity).toBe('controller-e2e-0')
  })

  test('a claim in the JetStream registry labels the pod; deleting the record deletes the pod', async () => {
    const pod = warm()[0]!.metadata.name as string
    await state.registry.create({ session_id: 's-e2e', owner: pod, state: 'busy', cli_session_id: 'c', created_at: Date.now(), last_active: Date.now(), stats: emptyStats() })
    await until(() => kube.get('pods', NS, pod)?.metadata.labels[LABEL.state] === 'assigned', 'assigned', 10_000)
    expect(kube.get('pods', NS, pod)!.metadata.annotations[ANNOTATION.sessionId]).toBe('s-e2e')
    await until(() => warm().length === 2, 'refilled', 10_000)
    await state.registry.delete('s-e2e')
    await until(() => kube.get('pods', NS, pod) === undefined, 'deleted with its session', 10_000)
  })

  test('a gateway asks for a cold pod over NATS', async () => {
    const answer = await requestColdPod(bus, prefix, 'cold one', 5_000)
    expect(answer).toEqual({ ok: true, pod: expect.stringMatching(/^e2e-[a-z0-9]{10}$/), created: true })
    expect(kube.get('pods', NS, (answer as { pod: string }).pod)!.metadata.annotations[ANNOTATION.demandFor]).toBe('cold one')
  })

  test('SIGTERM: exits 0 and hands the lease back', async () => {
    expect(await controller.stop()).toBe(0)
    expect(kube.get('leases', NS, 'agent-runtime-controller')!.spec.holderIdentity).toBe('')
  })
})
