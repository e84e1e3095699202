/**
 * A session end to end through controller-placed pods on a real API server:
 * WebSocket client → gateway process → NATS → the runner of a sandbox pod the
 * controller made → fake CLI → back to the client. The chart is installed
 * with helm into a namespace enforcing `restricted`; the controller runs with
 * the chart's ServiceAccount token; every process reads the chart's ConfigMap
 * as its pod would. kwok marks the pods Running, and `PodRunners` starts each
 * pod's runner from the pod spec the controller created (its args, its env,
 * RUNNER_ID = its name, its ConfigMap), with NATS on loopback and the fake CLI.
 */
import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, test } from 'vitest'
import { percentile } from '../../bench/relay.ts'
import { ANNOTATION } from '../../controller/labels.ts'
import { until } from './kube-local.ts'
import { sessionClusterForFile } from './session-cluster.ts'

const NS = 'ar-session'
const EVICT = 'kube-local.agent-runtime.io/evict'
/** Warm starts measured (each on a fresh warm pod). */
const WARM_STARTS = 20

const k8s = sessionClusterForFile({ namespace: NS, release: 'ar', prefix: `k8ss${process.pid}` })
const POOL = k8s.pool
const { warmWithRunner, output, ownerOf, turnEvent } = k8s
async function podOf(name: string): Promise<V1Pod | undefined> {
  return k8s.api.core.readNamespacedPod({ name, namespace: NS }).catch(() => undefined)
}

describe('k8s - a session end to end through controller-placed pods on a real API server', () => {
  test('a WebSocket turn runs on a warm pod the controller made: the pod is labelled with it and the pool refills', async () => {
    await until(
      async () => (await warmWithRunner()).length === 2,
      () => `two warm pods with runners\n${output()}`,
      60_000,
    )
    k8s.client.send({ type: 'execute', request_id: 1, session_id: 'k8s-1', prompt: 'tool: echo through a pod' })
    const completed = await k8s.client.event('completed', 'k8s-1', 30_000)
    expect(completed).toMatchObject({ request_id: 1, stats: { turns: 1, tool_calls: 1 } })
    expect(k8s.client.eventsOf('k8s-1').find((msg) => msg.event === 'tool_result')?.data).toBe('through a pod')
    const owner = await ownerOf('k8s-1')
    expect(owner).toMatch(new RegExp(`^${POOL}-`))
    expect(k8s.pods.get(owner!)?.process.output()).toContain('k8s-1')
    await until(
      async () => (await podOf(owner!))?.metadata?.annotations?.[ANNOTATION.sessionId] === 'k8s-1',
      () => `the pod labelled\n${output()}`,
      20_000,
    )
    await until(
      async () => (await warmWithRunner()).length === 2,
      () => `refilled\n${output()}`,
      60_000,
    )
  })

  test('an evicted pod mid-turn: SANDBOX_LOST reaches the WebSocket client, the pod loses its process, the session its owner and the pod its lease; the next execute is placed again', async () => {
    const first = (await ownerOf('k8s-1'))!
    k8s.client.send({ type: 'execute', request_id: 2, session_id: 'k8s-1', prompt: 'sleep: 60' })
    await turnEvent('k8s-1', 2, (event) => event === 'tool_use')
    await k8s.api.core.patchNamespacedPod({
      name: first,
      namespace: NS,
      body: [{ op: 'add', path: `/metadata/annotations/${EVICT.replace('/', '~1')}`, value: 'true' }],
    })
    const lost = await turnEvent('k8s-1', 2, (event) => event === 'error')
    expect(lost).toMatchObject({ error: { code: 'SANDBOX_LOST' }, request_id: 2 })
    // Its process is gone (killed when the pod failed, or stopped when the controller deleted it first). Exited, not only
    // signalled: the gateway still names it the owner, and the next execute must find nobody there rather than a dying runner.
    await until(() => k8s.pods.get(first)?.exited === true, 'the evicted pod lost its process', 10_000)
    await until(
      async () => (await k8s.state.leases.get(first)) === undefined,
      () => `the dead pod's lease dropped\n${output()}`,
      10_000,
    )
    await until(
      async () => (await ownerOf('k8s-1')) !== first,
      () => `the owner released\n${output()}`,
      10_000,
    )
    // The next execute is placed again, on another pod.
    k8s.client.send({ type: 'execute', request_id: 3, session_id: 'k8s-1', prompt: 'tool: echo again' })
    const again = await turnEvent('k8s-1', 3, (event) => event === 'completed' || event === 'error').catch((err: Error) => {
      throw new Error(`${err.message}\n${output()}`)
    })
    if (again.event !== 'completed') throw new Error(`the next execute: ${JSON.stringify(again)}\n${output()}`)
  })

  test(`warm start on the real API server: execute → first event over ${WARM_STARTS} sessions, each on a fresh warm pod, against a second turn on the same pod`, async () => {
    const warmStart: number[] = []
    const placed: number[] = []
    const owners = new Set<string>()
    /** Execute → the turn's first event; then waits for its end. */
    async function turn(sessionId: string, requestId: string): Promise<number> {
      const sent = performance.now()
      k8s.client.send({ type: 'execute', request_id: requestId, session_id: sessionId, prompt: 'hi' })
      await turnEvent(sessionId, requestId, () => true)
      const latency = performance.now() - sent
      await turnEvent(sessionId, requestId, (event) => event === 'completed')
      return latency
    }
    for (let i = 0; i < WARM_STARTS; i++) {
      // A full pool, so no runner starts on these 2 cores while a start is measured.
      await until(
        async () => (await warmWithRunner()).length === 2,
        () => `a full warm pool with runners\n${output()}`,
        60_000,
      )
      const sessionId = `k8s-warm-${i}`
      warmStart.push(await turn(sessionId, `w${i}`))
      placed.push(await turn(sessionId, `p${i}`))
      owners.add((await ownerOf(sessionId))!)
    }
    const line = (name: string, list: number[]) => {
      const sorted = [...list].sort((a, b) => a - b)
      return `${name} p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`
    }
    console.log(
      `[k8s] execute → first event over ${WARM_STARTS} sessions on the real API server: ${line('warm start (new session, placed on a warm pod)', warmStart)}; ${line('second turn (same pod)', placed)}`,
    )
    // Each session ran on a pod of its own.
    expect(owners.size).toBe(WARM_STARTS)
    expect(k8s.pods.errors).toEqual([])
  }, 600_000)
})
