import { afterEach, describe, expect, test } from 'vitest'
import type { AssignResult, SessionAssigner } from '../../controller/credentials/assigner.ts'
import { ANNOTATION, LABEL, MANAGED_BY } from '../../controller/labels.ts'
import { POD_CREDS_KEY, podCredentialsSecret } from '../../controller/pod-spec.ts'
import type { ManualClock } from '../fixtures/manual-clock.ts'
import { byState, drive, NAMESPACE, startHarness, until, type Harness } from './harness.ts'

/**
 * Per-session credentials (controller.session_credentials) against the fake API server: the
 * controller places sessions itself through an assigner that answers as scripted here.
 */
class ScriptedAssigner {
  readonly ttlMs = 60_000
  readonly calls: { pod: string; sessionId: string }[] = []
  /** Answers to the next assignments, in order; then every assignment succeeds. */
  readonly script: AssignResult[] = []
  clock: ManualClock | undefined

  warmPod(pod: string) {
    return { creds: `creds of ${pod}`, inboxPrefix: `_INBOX_${pod}` }
  }

  async assign(pod: string, sessionId: string): Promise<AssignResult> {
    this.calls.push({ pod, sessionId })
    return this.script.shift() ?? { ok: true, expiresAt: this.clock!.now() + this.ttlMs }
  }
}

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

async function start(warmPool: number): Promise<{ h: Harness; assigner: ScriptedAssigner }> {
  const assigner = new ScriptedAssigner()
  h = await startHarness({ warm_pool: warmPool }, { assigner: assigner as unknown as SessionAssigner })
  assigner.clock = h.clock
  await until(() => byState(h!.pods(), 'warm').filter((p) => p.status?.phase === 'Running').length === warmPool, 'warm pool running')
  await h.controller.settled()
  h.sessions.put({ session_id: 's1', state: 'idle', last_active: h.clock.now() })
  return { h, assigner }
}

describe('controller - per-session credentials', () => {
  test('each warm pod gets its own credential in a Secret the pod owns', async () => {
    const { h } = await start(2)
    const pods = byState(h.pods(), 'warm')
    expect(h.secrets.map((s) => s.metadata!.name).sort()).toEqual(pods.map((p) => podCredentialsSecret(p.metadata.name)).sort())
    for (const pod of pods) {
      const secret = h.secrets.find((s) => s.metadata!.name === podCredentialsSecret(pod.metadata.name))!
      expect(secret.metadata!.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid, controller: true }])
      expect(secret.metadata!.labels).toEqual({ [LABEL.managedBy]: MANAGED_BY, [LABEL.pool]: 'agent-runtime' })
      expect(secret.stringData).toEqual({ [POD_CREDS_KEY]: `creds of ${pod.metadata.name}` })
    }
  })

  test('a demand is placed on a ready warm pod, answered once placed, and the pod labelled with its session', async () => {
    const { h, assigner } = await start(1)
    const pod = byState(h.pods(), 'warm')[0]!.metadata.name as string
    expect(await h.demand.request('s1')).toEqual({ ok: true, pod, created: false, assigned: true })
    expect(assigner.calls).toEqual([{ pod, sessionId: 's1' }])
    await until(() => h.api.get('pods', NAMESPACE, pod)?.metadata.labels[LABEL.state] === 'assigned', 'labelled assigned')
    expect(h.api.get('pods', NAMESPACE, pod)!.metadata.annotations[ANNOTATION.sessionId]).toBe('s1')
    await h.controller.settled()
    expect(h.controller.stats.assigned).toBe(1)
  })

  test('the credential is renewed after two thirds of its life; a failed renewal is tried again a second later', async () => {
    const { h, assigner } = await start(1)
    const pod = byState(h.pods(), 'warm')[0]!.metadata.name as string
    await h.demand.request('s1')
    h.sessions.claim('s1', pod, h.clock.now())
    await h.controller.settled()
    h.clock.advance(39_000)
    await h.controller.settled()
    expect(assigner.calls).toHaveLength(1)
    assigner.script.push({ ok: false, reason: 'timeout', message: 'no answer' })
    h.clock.advance(1_000)
    await until(() => assigner.calls.length === 2, 'renewal')
    h.clock.advance(999)
    await h.controller.settled()
    expect(assigner.calls).toHaveLength(2)
    h.clock.advance(1)
    await until(() => assigner.calls.length === 3, 'renewal tried again')
    expect(assigner.calls.every((c) => c.pod === pod && c.sessionId === 's1')).toBe(true)
  })

  test('a new leader renews the credentials of placed pods at once', async () => {
    const { h, assigner } = await start(1)
    const pod = byState(h.pods(), 'warm')[0]!.metadata.name as string
    await h.demand.request('s1')
    h.sessions.claim('s1', pod, h.clock.now())
    await until(() => h.api.get('pods', NAMESPACE, pod)?.metadata.labels[LABEL.state] === 'assigned', 'labelled assigned')
    await h.controller.stop()
    h.replica('controller-1').start()
    await until(() => assigner.calls.length === 2, 'renewed by the new leader')
    expect(assigner.calls[1]).toEqual({ pod, sessionId: 's1' })
  })

  test('a pod whose runner does not listen yet is passed over; the session goes to another pod', async () => {
    const { h, assigner } = await start(2)
    assigner.script.push({ ok: false, reason: 'not-listening' })
    const answer = h.demand.request('s1')
    await drive(h, () => assigner.calls.length === 2, 'placed on the second pod')
    const [first, second] = assigner.calls
    expect(second!.pod).not.toBe(first!.pod)
    expect(await answer).toEqual({ ok: true, pod: second!.pod, created: false, assigned: true })
    expect(h.api.get('pods', NAMESPACE, first!.pod)).toBeDefined()
    expect(h.controller.stats.deleted).toBe(0)
  })

  test('a pod that refuses its session is deleted and the session goes to another pod', async () => {
    const { h, assigner } = await start(2)
    assigner.script.push({ ok: false, reason: 'refused', message: 'INTERNAL: no' })
    const answer = h.demand.request('s1')
    await drive(h, () => assigner.calls.length === 2, 'placed on the second pod')
    const [first, second] = assigner.calls
    expect(second!.pod).not.toBe(first!.pod)
    expect(await answer).toEqual({ ok: true, pod: second!.pod, created: false, assigned: true })
    await until(() => h.api.get('pods', NAMESPACE, first!.pod) === undefined, 'refusing pod deleted')
    await h.controller.settled()
    expect(h.controller.stats.deleted).toBe(1)
  })
})
