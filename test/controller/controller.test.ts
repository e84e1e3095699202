import { afterEach, describe, expect, test } from 'vitest'
import { ANNOTATION, LABEL, sessionLabelValue } from '../../controller/labels.ts'
import { byState, drive, NAMESPACE, startHarness, until, type Harness } from './harness.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const names = (pods: Record<string, any>[]) => pods.map((p) => p.metadata.name as string).sort()
const live = (h: Harness) => h.pods().filter((p) => !p.metadata.deletionTimestamp)

/** A warm pod whose runner answers placement: the first one ready. */
const warmPod = (h: Harness) => byState(h.pods(), 'warm').find((p) => p.status?.phase === 'Running')!.metadata.name as string

describe('controller - warm pool', () => {
  test('fills the pool and refills it when a pod goes away', async () => {
    h = await startHarness({ warm_pool: 3 })
    await until(() => byState(h!.pods(), 'warm').length === 3, 'three warm pods')
    const gone = warmPod(h)
    h.kubelet.vanish(gone)
    await until(() => byState(h!.pods(), 'warm').length === 3 && !names(h!.pods()).includes(gone), 'a replacement')
    await until(() => h!.controller.stats.created === 4, 'four creates answered')
    await h.controller.settled()
    expect(h.controller.stats.created).toBe(4)
  })

  test('a claimed pod is labelled with its session and leaves the warm count; the pool refills', async () => {
    h = await startHarness({ warm_pool: 2 })
    await until(() => byState(h!.pods(), 'warm').length === 2, 'warm pool')
    const pod = warmPod(h)
    const sessionId = 'chat room #1'
    expect(h.sessions.claim(sessionId, pod, h.clock.now())).toBe(true)
    await until(() => byState(h!.pods(), 'assigned').length === 1 && byState(h!.pods(), 'warm').length === 2, 'assigned + refilled')
    const assigned = h.api.get('pods', NAMESPACE, pod)!
    expect(assigned.metadata.labels[LABEL.session]).toBe(sessionLabelValue(sessionId))
    expect(assigned.metadata.annotations[ANNOTATION.sessionId]).toBe(sessionId)
    expect(assigned.metadata.annotations[ANNOTATION.assignedAt]).toBe(String(h.clock.now()))
    // Closing the session (the registry drops it) deletes its pod; the pool is untouched.
    h.sessions.delete(sessionId)
    await until(() => h!.api.get('pods', NAMESPACE, pod) === undefined, 'pod of the closed session deleted')
    expect(byState(h.pods(), 'warm')).toHaveLength(2)
    expect(h.events.failures).toEqual([])
  })

  test('an idle session loses its pod after session_idle_timeout; its owner is released', async () => {
    h = await startHarness({ warm_pool: 1, session_idle_timeout: '10m' })
    await until(() => byState(h!.pods(), 'warm').length === 1, 'warm pool')
    const pod = warmPod(h)
    h.sessions.claim('s1', pod, h.clock.now())
    await until(() => byState(h!.pods(), 'assigned').length === 1, 'assigned')
    await h.controller.settled()
    h.clock.advance(9 * 60_000)
    await h.controller.settled()
    expect(h.api.get('pods', NAMESPACE, pod)).toBeDefined()
    h.clock.advance(60_000)
    await until(() => h!.api.get('pods', NAMESPACE, pod) === undefined, 'idle pod deleted')
    expect(h.events.releases).toEqual([{ sessionId: 's1', runnerId: pod }])
    expect(h.sessions.get('s1')?.owner).toBeUndefined()
    expect(h.events.failures).toEqual([])
  })

  test('orphans left by an earlier controller are deleted at start; live sessions keep their pods', async () => {
    h = await startHarness({ warm_pool: 0 }, { start: false })
    const seed = (name: string, sessionId: string) =>
      h!.api.seed('pods', NAMESPACE, {
        metadata: {
          name,
          labels: { [LABEL.component]: 'sandbox', [LABEL.pool]: 'agent-runtime', [LABEL.state]: 'assigned' },
          annotations: { [ANNOTATION.sessionId]: sessionId },
        },
        spec: { containers: [{ name: 'runner', image: 'r' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      })
    seed('agent-runtime-orphan0001', 'forgotten')
    seed('agent-runtime-alive00001', 'alive')
    h.sessions.put({ session_id: 'alive', owner: 'agent-runtime-alive00001', state: 'busy', last_active: h.clock.now() })
    h.controller.start()
    await until(() => h!.api.get('pods', NAMESPACE, 'agent-runtime-orphan0001') === undefined, 'orphan deleted')
    await h.controller.settled()
    expect(names(h.pods())).toEqual(['agent-runtime-alive00001'])
  })
})

describe('controller - demand', () => {
  test('a session without a warm runner gets a cold pod, which it then claims', async () => {
    h = await startHarness({ warm_pool: 0 })
    await until(() => h!.controller.informer.synced, 'synced')
    const answer = await h.demand.request('s1')
    expect(answer).toEqual({ ok: true, pod: expect.stringMatching(/^agent-runtime-[a-z0-9]{10}$/), created: true })
    const pod = (answer as { pod: string }).pod
    expect(h.api.get('pods', NAMESPACE, pod)!.metadata.annotations[ANNOTATION.demandFor]).toBe('s1')
    // Asking again answers the same pod.
    expect(await h.demand.request('s1')).toEqual({ ok: true, pod, created: false })
    await until(() => h!.api.get('pods', NAMESPACE, pod)?.status.phase === 'Running', 'running')
    h.sessions.claim('s1', pod, h.clock.now())
    await until(() => byState(h!.pods(), 'assigned').length === 1, 'assigned')
    expect(h.api.get('pods', NAMESPACE, pod)!.metadata.annotations[ANNOTATION.demandFor]).toBeUndefined()
    expect(live(h)).toHaveLength(1)
  })

  test('demand beyond max_pods is refused', async () => {
    h = await startHarness({ warm_pool: 1, max_pods: 1 })
    await until(() => byState(h!.pods(), 'warm').length === 1, 'warm pool')
    expect(await h.demand.request('s1')).toEqual({ ok: false, code: 'POOL_EXHAUSTED', message: 'controller.max_pods (1) sandbox pods exist' })
  })

  test('a cold pod that never becomes ready: after pod_ready_timeout the session gets SANDBOX_NOT_READY and the pod goes', async () => {
    h = await startHarness({ warm_pool: 0, pod_ready_timeout: '90s' }, { autoReady: false })
    await until(() => h!.controller.informer.synced, 'synced')
    const answer = await h.demand.request('s1')
    const pod = (answer as { pod: string }).pod
    h.kubelet.stuck(pod)
    await h.controller.settled()
    h.clock.advance(89_000)
    await h.controller.settled()
    expect(h.events.failures).toEqual([])
    h.clock.advance(1_000)
    await until(() => h!.api.get('pods', NAMESPACE, pod) === undefined, 'stuck pod deleted')
    expect(h.events.failures).toEqual([{ sessionId: 's1', code: 'SANDBOX_NOT_READY', message: `the sandbox pod ${pod} was not ready after 90 s` }])
    await until(() => h!.api.list('events', NAMESPACE).length === 2, 'two Kubernetes events')
    const recorded = h.api.list('events', NAMESPACE)
    expect(recorded.map((e) => e.reason).sort()).toEqual(['NotReady', 'SANDBOX_NOT_READY'])
    expect(recorded.every((e) => e.involvedObject.name === pod)).toBe(true)
  })
})

describe('controller - failures', () => {
  test('a pod evicted mid-turn: SANDBOX_LOST, owner released, pod removed; the next execute lands on a warm pod', async () => {
    h = await startHarness({ warm_pool: 2 })
    await until(() => byState(h!.pods(), 'warm').length === 2, 'warm pool')
    const first = warmPod(h)
    h.sessions.claim('s1', first, h.clock.now())
    h.sessions.update('s1', { state: 'busy' })
    await until(() => byState(h!.pods(), 'assigned').length === 1 && byState(h!.pods(), 'warm').length === 2, 'assigned + refilled')
    h.kubelet.evict(first)
    await until(() => h!.api.get('pods', NAMESPACE, first) === undefined, 'evicted pod removed')
    expect(h.events.failures).toEqual([
      { sessionId: 's1', code: 'SANDBOX_LOST', message: `the sandbox pod ${first} ended (Evicted); the next execute starts on a new sandbox` },
    ])
    expect(h.events.releases).toEqual([{ sessionId: 's1', runnerId: first }])
    expect(h.sessions.get('s1')?.owner).toBeUndefined()
    // The next execute: placement finds a warm runner, which claims the released session.
    const second = warmPod(h)
    expect(h.sessions.claim('s1', second, h.clock.now())).toBe(true)
    await until(() => h!.api.get('pods', NAMESPACE, second)?.metadata.labels[LABEL.state] === 'assigned', 're-placed')
    await until(() => byState(h!.pods(), 'warm').length === 2, 'refilled again')
    expect(h.events.failures).toHaveLength(1)
  })

  test('a pod deleted by someone else (drain) mid-turn is a loss; graceful deletion finishes later', async () => {
    h = await startHarness({ warm_pool: 1 })
    h.api.gracefulDelete = true
    await until(() => byState(h!.pods(), 'warm').length === 1, 'warm pool')
    const pod = warmPod(h)
    h.sessions.claim('s1', pod, h.clock.now())
    h.sessions.update('s1', { state: 'busy' })
    await until(() => byState(h!.pods(), 'assigned').length === 1, 'assigned')
    h.api.mutate('pods', NAMESPACE, pod, (p) => (p.metadata.deletionTimestamp = new Date(h!.clock.now()).toISOString()))
    await until(() => h!.events.failures.length === 1, 'loss reported')
    expect(h.events.failures[0]!.code).toBe('SANDBOX_LOST')
    h.kubelet.finalize(pod)
    await h.controller.settled()
    expect(h.events.failures).toHaveLength(1)
  })

  test('survives 409 conflicts: the label is written once the version is current', async () => {
    h = await startHarness({ warm_pool: 1 })
    await until(() => byState(h!.pods(), 'warm').length === 1, 'warm pool')
    const pod = warmPod(h)
    h.api.fail({ method: 'PATCH', resource: 'pods', status: 409, times: 2 })
    h.sessions.claim('s1', pod, h.clock.now())
    await drive(h, () => h!.api.get('pods', NAMESPACE, pod)?.metadata.labels[LABEL.state] === 'assigned', 'assigned in the end')
    expect(h.controller.stats.conflicts).toBe(2)
    expect(h.api.requests.filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([409, 409, 200])
  })

  test('survives 404 on delete: the pod counts as gone', async () => {
    h = await startHarness({ warm_pool: 1 })
    await until(() => byState(h!.pods(), 'warm').length === 1, 'warm pool')
    const pod = warmPod(h)
    h.sessions.claim('s1', pod, h.clock.now())
    await until(() => byState(h!.pods(), 'assigned').length === 1, 'assigned')
    h.api.fail({ method: 'DELETE', resource: 'pods', status: 404 })
    h.sessions.delete('s1')
    await until(() => h!.api.requests.some((r) => r.method === 'DELETE' && r.status === 404), 'the 404')
    await h.controller.settled()
    expect(h.controller.stats.deleted).toBe(1)
    // Level-triggered: the pod is still there, so a later pass deletes it for real.
    await drive(h, () => h!.api.get('pods', NAMESPACE, pod) === undefined, 'deleted on a later pass', 5_000)
    expect(h.api.requests.filter((r) => r.method === 'DELETE').map((r) => r.status)).toEqual([404, 200])
  })

  test('survives API errors on create: backs off, then fills the pool', async () => {
    h = await startHarness({ warm_pool: 2 })
    h.api.fail({ method: 'POST', resource: 'pods', status: 500, times: 3 })
    await drive(h, () => byState(h!.pods(), 'warm').length === 2, 'pool filled after the errors')
    expect(h.api.requests.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([500, 500, 500, 201, 201])
  })

  test('a dropped watch resumes from the last version and sees what changed meanwhile', async () => {
    h = await startHarness({ warm_pool: 1 })
    await until(() => byState(h!.pods(), 'warm').length === 1, 'warm pool')
    await until(() => h!.api.watchCount === 1, 'watching')
    h.api.dropWatches()
    const gone = warmPod(h)
    h.kubelet.vanish(gone)
    await drive(h, () => byState(h!.pods(), 'warm').length === 1 && !names(h!.pods()).includes(gone), 'replacement after the reconnect')
    expect(h.controller.informer.stats.lists).toBe(1)
    expect(h.controller.informer.stats.watches).toBeGreaterThanOrEqual(2)
  })

  test('410 Gone: the informer lists again and catches up', async () => {
    for (const asHttp of [false, true]) {
      h = await startHarness({ warm_pool: 1 })
      h.api.goneAsHttpStatus = asHttp
      await until(() => byState(h!.pods(), 'warm').length === 1 && h!.api.watchCount === 1, 'warm pool, watching')
      h.api.dropWatches()
      const gone = warmPod(h)
      h.kubelet.vanish(gone)
      h.api.compact()
      await drive(h, () => h!.controller.informer.stats.gone === 1, `410 seen (http status: ${asHttp})`)
      await drive(h, () => byState(h!.pods(), 'warm').length === 1 && !names(h!.pods()).includes(gone), 'caught up')
      expect(h.controller.informer.stats.lists).toBe(2)
      await h.close()
      h = undefined
    }
  })
})

describe('controller - leader election', () => {
  test('of two replicas one leads; when it stops the other takes over', async () => {
    h = await startHarness(
      { warm_pool: 2, leader_election: { enabled: true, lease_duration: '15s', renew_interval: '5s' } },
      { start: false, identity: 'replica-a' },
    )
    const b = h.replica('replica-b')
    h.controller.start()
    await until(() => h!.controller.leading, 'a leads')
    b.start()
    await until(() => h!.api.requests.filter((r) => r.resource === 'leases').length >= 3, 'b tried')
    await b.elector!.tick()
    expect(b.leading).toBe(false)
    await until(() => byState(h!.pods(), 'warm').length === 2, 'pool by the leader')
    expect(h.api.get('leases', NAMESPACE, 'agent-runtime-controller')!.spec.holderIdentity).toBe('replica-a')
    // Only the leader serves demand.
    await h.controller.stop()
    expect(h.api.get('leases', NAMESPACE, 'agent-runtime-controller')!.spec.holderIdentity).toBe('')
    await b.elector!.tick()
    await until(() => b.leading, 'b leads after a released the lease')
    expect(h.api.get('leases', NAMESPACE, 'agent-runtime-controller')!.spec.leaseTransitions).toBe(1)
    expect((await h.demand.request('s1')).ok).toBe(true)
  })

  test('a crashed leader is replaced after a whole lease duration, not before', async () => {
    h = await startHarness({ warm_pool: 0, leader_election: { enabled: true, lease_duration: '15s', renew_interval: '5s' } }, { start: false })
    h.api.seed('leases', NAMESPACE, {
      metadata: { name: 'agent-runtime-controller' },
      spec: { holderIdentity: 'dead-replica', leaseDurationSeconds: 15, renewTime: '2020-01-01T00:00:00.000000Z' },
    })
    h.controller.start()
    await until(() => h!.api.requests.some((r) => r.resource === 'leases'), 'first look')
    await h.controller.elector!.tick()
    h.clock.advance(14_000)
    await h.controller.elector!.tick()
    expect(h.controller.leading).toBe(false)
    h.clock.advance(1_000)
    await h.controller.elector!.tick()
    expect(h.controller.leading).toBe(true)
  })

  test('a leader whose renewals fail steps down before another may take over', async () => {
    h = await startHarness({ warm_pool: 1, leader_election: { enabled: true, lease_duration: '15s', renew_interval: '5s' } })
    await until(() => h!.controller.leading, 'leads')
    h.api.fail({ resource: 'leases', status: 500, times: 100 })
    h.clock.advance(5_000)
    await h.controller.elector!.tick()
    expect(h.controller.leading).toBe(true)
    h.clock.advance(5_000)
    await h.controller.elector!.tick()
    expect(h.controller.leading).toBe(false)
    // Not leading: no reconcile acts on the pods.
    const before = h.api.requests.filter((r) => r.resource === 'pods' && r.method !== 'GET').length
    h.kubelet.vanish(byState(h.pods(), 'warm')[0]?.metadata.name ?? 'none')
    h.clock.advance(60_000)
    await h.controller.settled()
    expect(h.api.requests.filter((r) => r.resource === 'pods' && r.method !== 'GET').length).toBe(before)
  })
})
