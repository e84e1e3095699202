/**
 * The controller against a real API server (scripts/kube-local.sh), under the
 * chart's own RBAC: the chart is installed with helm (default values) into a
 * namespace enforcing the `restricted` Pod Security Standard, and
 * `agent-runtime controller` runs here as a process with the chart's config
 * (its ConfigMap) and a token of the chart's controller ServiceAccount. So the
 * API server checks every request against the chart's Role and every pod
 * against PodSecurity admission. kwok plays the node: pods become Running and
 * Ready without containers (a pod annotation makes one never ready, or
 * evicts it). Real NATS carries the session registry, demand and events.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { parse } from 'yaml'
import { NatsBus } from '../../bus/mod.ts'
import { subjects } from '../../contract/mod.ts'
import { emptyStats } from '../../contract/stats.ts'
import { ControllerConfigSchema } from '../../controller/config.ts'
import { ANNOTATION, LABEL, MANAGED_BY, poolSelector } from '../../controller/labels.ts'
import { buildSandboxPod } from '../../controller/pod-spec.ts'
import { requestColdPod } from '../../gateway/cold-start.ts'
import { resolveConfig } from '../../service/config/mod.ts'
import { openServiceState } from '../../service/state.ts'
import { sample } from '../observability/prometheus.ts'
import type { State } from '../../state/mod.ts'
import { CHART } from '../charts/render.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { admin, clients, helmOn, kubeLocalForFile, restrictedNamespace, serviceAccountKubeconfig, until, type Clients } from './kube-local.ts'

const NS = 'ar-controller'
const RELEASE = 'ar'
const FULLNAME = `${RELEASE}-agent-runtime`
const POOL = FULLNAME
const LEASE = `${FULLNAME}-controller`
const prefix = `k8s${process.pid}`
/** kwok stage triggers (scripts/kube-local/kwok.yaml). */
const NEVER_READY = 'kube-local.agent-runtime.io/never-ready'
const EVICT = 'kube-local.agent-runtime.io/evict'

let dir: string
let kubeconfig: string
let api: Clients
let asController: Clients
let controllerKubeconfig: string
let nats: NatsFixture
let bus: NatsBus
let state: State
let baseConfig: Record<string, any>
const controllers: ServiceProcess[] = []
const events: { subject: string; event: Record<string, any> }[] = []

const cluster = kubeLocalForFile()

beforeAll(async () => {
  if (cluster === undefined) return
  kubeconfig = cluster.kubeconfig
  api = admin(kubeconfig)
  dir = await mkdtemp(path.join(os.tmpdir(), 'ar-k8s-controller-'))
  await restrictedNamespace(api, NS)
  await helmOn(kubeconfig, ['install', RELEASE, CHART, '--namespace', NS, '--wait', '--timeout', '3m'])
  controllerKubeconfig = await serviceAccountKubeconfig(api, NS, `${FULLNAME}-controller`, path.join(dir, 'controller.kubeconfig'))
  const config = new (await import('@kubernetes/client-node')).KubeConfig()
  config.loadFromFile(controllerKubeconfig)
  asController = clients(config)
  // The chart's own service config, as its pods read it, pointed at this test's NATS.
  const configMap = await api.core.readNamespacedConfigMap({ name: `${FULLNAME}-config`, namespace: NS })
  nats = await startNats()
  baseConfig = parse(configMap.data!['config.yaml']!)
  baseConfig.nats = { ...baseConfig.nats, url: nats.url, prefix }
  baseConfig.state = { storage: 'memory' }
  baseConfig.server = { ...baseConfig.server, host: '127.0.0.1', port: 0 }
  baseConfig.log = { level: 'info' }
  // Shorter than the chart's 15 s / 5 s / 30 s, so failover and resyncs fit a test.
  baseConfig.controller.leader_election = { ...baseConfig.controller.leader_election, lease_duration: '6s', renew_interval: '2s' }
  baseConfig.controller.resync_interval = '5s'
  // The chart's probe port (8081) on a pod of its own; here several replicas share one host.
  baseConfig.controller.http_port = 0
  bus = await NatsBus.connect(nats.url, { name: 'k8s-test' })
  state = await openServiceState(bus, resolveConfig(baseConfig, {}), pino({ level: 'silent' }))
  bus.subscribe(`${prefix}.evt.>`, (msg) => events.push({ subject: msg.subject, event: JSON.parse(msg.data) }))
}, 300_000)

afterAll(async () => {
  for (const c of controllers) await c.stop('SIGKILL').catch(() => {})
  await state?.close()
  await bus?.close()
  await nats?.stop()
  if (api) await api.core.deleteNamespace({ name: NS }).catch(() => {})
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function startController(name: string, overrides: (config: Record<string, any>) => void = () => {}): Promise<ServiceProcess> {
  const config = structuredClone(baseConfig)
  overrides(config)
  const process_ = await startServiceProcess('controller', config, dir, { KUBECONFIG: controllerKubeconfig, POD_NAME: name, POD_NAMESPACE: NS })
  controllers.push(process_)
  return process_
}

const live = (p: V1Pod) => p.metadata?.deletionTimestamp === undefined
const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
async function pods(pool = POOL): Promise<V1Pod[]> {
  return (await api.core.listNamespacedPod({ namespace: NS, labelSelector: poolSelector(pool) })).items.filter(live)
}
async function warm(): Promise<V1Pod[]> {
  return (await pods()).filter((p) => p.metadata?.labels?.[LABEL.state] === 'warm' && ready(p))
}
async function holder(name = LEASE): Promise<string | undefined> {
  return (await api.coordination.readNamespacedLease({ name, namespace: NS })).spec?.holderIdentity
}
const names = (list: V1Pod[]) => list.map((p) => p.metadata!.name!).sort()
const errorsOf = (sessionId: string, on = prefix) =>
  events.filter((e) => e.subject === subjects(on).events(sessionId) && e.event.event === 'error').map((e) => e.event)
async function gone(name: string): Promise<boolean> {
  return api.core.readNamespacedPod({ name, namespace: NS }).then(
    () => false,
    (err: { code?: number }) => err.code === 404,
  )
}
const output = () => controllers.map((c, i) => `--- controller ${i}\n${c.output()}`).join('\n')

describe('k8s - the controller on a real API server, under the chart RBAC and PodSecurity restricted', () => {
  let leader: ServiceProcess

  test('PodSecurity restricted is enforced in the namespace (so the pods below passed it)', async () => {
    // A pod with no security settings (root, capabilities kept) and a privileged one: both refused by PodSecurity, not by validation.
    for (const securityContext of [undefined, { privileged: true }]) {
      const pod = { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'x', ...(securityContext && { securityContext }) }] } }
      await expect(api.core.createNamespacedPod({ namespace: NS, body: pod })).rejects.toMatchObject({
        code: 403,
        body: expect.stringContaining('violates PodSecurity \\"restricted:latest\\"'),
      })
    }
  })

  test("the controller's token has the chart's Role and nothing more", async () => {
    await expect(asController.core.listNamespacedPod({ namespace: NS })).resolves.toBeDefined()
    await expect(asController.core.listNamespacedSecret({ namespace: NS })).rejects.toMatchObject({ code: 403 })
    await expect(asController.core.readNamespacedConfigMap({ name: `${FULLNAME}-config`, namespace: NS })).rejects.toMatchObject({ code: 403 })
    await expect(asController.core.listNamespacedPod({ namespace: 'default' })).rejects.toMatchObject({ code: 403 })
    await expect(asController.apps.deleteNamespacedDeployment({ name: `${FULLNAME}-gateway`, namespace: NS })).rejects.toMatchObject({ code: 403 })
  })

  test('takes the Lease and fills the warm pool with pods the API server accepts', async () => {
    leader = await startController('ctl-a')
    await until(
      async () => (await warm()).length === 2,
      () => `two ready warm pods\n${output()}`,
      30_000,
    )
    expect(await holder()).toBe('ctl-a')
    const pod = (await warm())[0]!
    // What the chart asks for, as stored by the API server.
    expect(pod.spec?.serviceAccountName).toBe(`${FULLNAME}-sandbox`)
    expect(pod.spec?.automountServiceAccountToken).toBe(false)
    expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true)
    expect(pod.spec?.containers[0]?.securityContext?.capabilities?.drop).toEqual(['ALL'])
    expect(pod.spec?.nodeName).toBe('kwok-node-0')
  })

  test('a warm pod deleted by someone else is replaced', async () => {
    const before = names(await warm())
    await api.core.deleteNamespacedPod({ name: before[0]!, namespace: NS })
    await until(
      async () => {
        const now = names(await warm())
        return now.length === 2 && !now.includes(before[0]!)
      },
      () => `a new warm pod\n${output()}`,
      30_000,
    )
  })

  test('a claim in the registry labels the pod assigned and the pool refills; closing the session deletes the pod', async () => {
    const pod = names(await warm())[0]!
    await state.registry.create({
      session_id: 's-claim',
      owner: pod,
      state: 'idle',
      cli_session_id: 'c',
      created_at: Date.now(),
      last_active: Date.now(),
      stats: emptyStats(),
    })
    await until(async () => (await api.core.readNamespacedPod({ name: pod, namespace: NS })).metadata?.labels?.[LABEL.state] === 'assigned', 'assigned', 20_000)
    expect((await api.core.readNamespacedPod({ name: pod, namespace: NS })).metadata?.annotations?.[ANNOTATION.sessionId]).toBe('s-claim')
    await until(async () => (await warm()).length === 2, 'refilled', 30_000)
    await state.registry.delete('s-claim')
    await until(() => gone(pod), 'the pod deleted with its session', 20_000)
  })

  test('an orphan (a pod of the pool whose session does not exist) is removed', async () => {
    const settings = ControllerConfigSchema.parse(baseConfig.controller).sandbox
    const orphan = buildSandboxPod({ name: `${POOL}-orphan0000`, pool: POOL, namespace: NS, settings, purpose: { kind: 'warm' } })
    orphan.metadata!.labels![LABEL.state] = 'assigned'
    orphan.metadata!.labels![LABEL.session] = 'ghost'
    orphan.metadata!.annotations![ANNOTATION.sessionId] = 'ghost'
    await api.core.createNamespacedPod({ namespace: NS, body: orphan })
    await until(
      () => gone(orphan.metadata!.name!),
      () => `the orphan removed\n${output()}`,
      20_000,
    )
  })

  test('a pod evicted mid-turn: SANDBOX_LOST to the session, its owner released, the pod deleted', async () => {
    const pod = names(await warm())[0]!
    await state.registry.create({
      session_id: 's-evict',
      owner: pod,
      state: 'busy',
      turn_id: 't-1',
      turn_request_id: 7,
      cli_session_id: 'c',
      created_at: Date.now(),
      last_active: Date.now(),
      stats: emptyStats(),
    })
    await until(async () => (await api.core.readNamespacedPod({ name: pod, namespace: NS })).metadata?.labels?.[LABEL.state] === 'assigned', 'assigned', 20_000)
    await api.core.patchNamespacedPod({
      name: pod,
      namespace: NS,
      body: [{ op: 'add', path: `/metadata/annotations/${EVICT.replace('/', '~1')}`, value: 'true' }],
    })
    await until(
      () => errorsOf('s-evict').length > 0,
      () => `SANDBOX_LOST\n${output()}`,
      20_000,
    )
    expect(errorsOf('s-evict')[0]).toMatchObject({ error: { code: 'SANDBOX_LOST' }, turn_id: 't-1', request_id: 7 })
    await until(async () => (await state.registry.get('s-evict'))?.value.owner === undefined, 'the owner released', 10_000)
    await until(() => gone(pod), 'the evicted pod deleted', 20_000)
    await until(async () => (await warm()).length === 2, 'refilled', 30_000)
    await state.registry.delete('s-evict')
  })

  test('a pod that never becomes ready: the session waiting for it gets SANDBOX_NOT_READY', async () => {
    // A second pool whose pods kwok never makes ready, with its own lease and NATS prefix (its own demand queue).
    const nrPrefix = `${prefix}nr`
    bus.subscribe(`${nrPrefix}.evt.>`, (msg) => events.push({ subject: msg.subject, event: JSON.parse(msg.data) }))
    await startController('ctl-nr', (config) => {
      config.nats.prefix = nrPrefix
      config.controller.pool = 'ar-nr'
      config.controller.warm_pool = 0
      config.controller.pod_ready_timeout = '3s'
      config.controller.leader_election.lease_name = 'ar-nr'
      config.controller.sandbox.annotations = { [NEVER_READY]: 'true' }
    })
    await until(async () => (await holder('ar-nr')) === 'ctl-nr', 'the second pool leads', 20_000)
    const answer = await requestColdPod(bus, nrPrefix, 's-never', 10_000)
    expect(answer).toMatchObject({ ok: true, created: true })
    const pod = (answer as { pod: string }).pod
    await until(async () => (await api.core.readNamespacedPod({ name: pod, namespace: NS })).status?.phase === 'Running', 'running', 10_000)
    expect(ready(await api.core.readNamespacedPod({ name: pod, namespace: NS }))).toBe(false)
    await until(
      () => errorsOf('s-never', nrPrefix).length > 0,
      () => `SANDBOX_NOT_READY\n${output()}`,
      20_000,
    )
    expect(errorsOf('s-never', nrPrefix)[0]).toMatchObject({ error: { code: 'SANDBOX_NOT_READY' } })
    await until(() => gone(pod), 'the never-ready pod deleted', 10_000)
  })

  test("the chart's probes: /healthz and /readyz answer on both replicas (a standby is ready to take over); /metrics say who leads and what the pool holds", async () => {
    const standby = await startController('ctl-probe')
    const get = async (process_: ServiceProcess, route: string) => {
      const response = await fetch(`${process_.address}${route}`)
      return { status: response.status, body: route === '/metrics' ? await response.text() : await response.json() }
    }
    expect(await get(leader, '/healthz')).toEqual({ status: 200, body: { status: 'alive' } })
    expect(await get(leader, '/readyz')).toEqual({ status: 200, body: { status: 'ready', leading: true, checks: { bus: true, kube: true } } })
    await until(
      async () => (await get(standby, '/readyz')).status === 200,
      () => `the standby ready\n${output()}`,
      20_000,
    )
    expect((await get(standby, '/readyz')).body).toEqual({ status: 'ready', leading: false, checks: { bus: true, kube: true } })
    const atLeader = (await get(leader, '/metrics')).body
    expect(sample(atLeader, 'service_controller_leader')).toBe(1)
    expect(sample(atLeader, 'service_controller_warm_pool_target')).toBe(2)
    expect(sample(atLeader, 'service_controller_warm_pods')).toBe((await warm()).length)
    expect(sample(atLeader, 'service_controller_pods', { state: 'warm', phase: 'Running' })).toBeGreaterThanOrEqual(2)
    expect(sample(atLeader, 'service_controller_reconcile_duration_seconds_count')).toBeGreaterThan(0)
    const atStandby = (await get(standby, '/metrics')).body
    expect(sample(atStandby, 'service_controller_leader')).toBe(0)
    expect(sample(atStandby, 'service_controller_pods', { state: 'warm', phase: 'Running' })).toBe(0)
    expect(await standby.stop()).toBe(0)
  })

  test('two replicas: one leads; when the leader dies the other takes the Lease and keeps the pool', async () => {
    const second = await startController('ctl-b')
    // A fixed window on purpose: the assertion is that ctl-b does not take the Lease from a live leader,
    // so there is nothing to wait for; 3 s is one and a half renew intervals of ctl-b campaigning.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(await holder()).toBe('ctl-a')
    expect(await warm()).toHaveLength(2)
    leader.child.kill('SIGKILL')
    await until(
      async () => (await holder()) === 'ctl-b',
      () => `ctl-b leads\n${output()}`,
      30_000,
    )
    const before = names(await warm())
    await api.core.deleteNamespacedPod({ name: before[0]!, namespace: NS })
    await until(
      async () => {
        const now = names(await warm())
        return now.length === 2 && !now.includes(before[0]!)
      },
      () => `the new leader refills\n${output()}`,
      30_000,
    )
    expect(await second.stop()).toBe(0)
    expect(await holder()).toBe('')
  })

  test('no request of the controllers was refused (RBAC or admission); their Events on the pods were stored', async () => {
    expect(output()).not.toMatch(/forbidden|violates PodSecurity|"code":\s*403/i)
    // A refused Event is only logged at debug level: look for them instead.
    const stored = (await api.core.listNamespacedEvent({ namespace: NS, labelSelector: `${LABEL.managedBy}=${MANAGED_BY}` })).items
    const reasons = new Set(stored.map((e) => e.reason))
    for (const reason of ['NotReady', 'PodFinished']) expect(reasons, [...reasons].join(', ')).toContain(reason)
    expect([...new Set(stored.map((e) => e.reportingInstance))].sort()).toEqual(expect.arrayContaining(['ctl-a', 'ctl-nr']))
  })
})
