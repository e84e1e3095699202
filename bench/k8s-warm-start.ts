/**
 * Kubernetes benchmark in the fake cluster: the controller (real code, real
 * client-node) against the fake API server, a fake kubelet that "runs" each
 * sandbox pod as an in-process fake runner on real NATS, and the JetStream
 * session registry.
 *
 * - warm start: a session's first command goes to the placement queue, a warm
 *   runner takes it, claims the session in the registry (compare-and-set) and
 *   publishes the first event; measured from the command to that event. The
 *   baseline is the same command to a runner that already owns the session
 *   (what dev mode and an already-placed session pay). The CLI's own start-up
 *   is the same in both and is left out.
 * - controller cold-start overhead: a demand for a cold pod over NATS until the
 *   controller answers with the pod created in the API (scheduling, image pull
 *   and container start, which a real cluster adds, are not included); the
 *   time from a claim until the replacement warm pod exists; and the time from
 *   the controller's start to a full warm pool in the API.
 */
import pino from 'pino'
import { NatsBus, type Bus, type Subscription } from '../bus/mod.ts'
import { resolveConfig } from '../service/config/mod.ts'
import { emptyStats } from '../contract/stats.ts'
import { sessionToken } from '../contract/subjects.ts'
import { systemClock } from '../controller/clock.ts'
import { ControllerConfigSchema } from '../controller/config.ts'
import { Controller } from '../controller/controller.ts'
import { BusDemandSource } from '../controller/demand.ts'
import { requestColdPod } from '../gateway/cold-start.ts'
import { ClientNodeKubeApi } from '../controller/kube/client.ts'
import { kubeConfigFor } from '../controller/kube/connect.ts'
import { LABEL } from '../controller/labels.ts'
import { RegistrySessionEvents, registrySessionSource } from '../controller/registry-source.ts'
import { openServiceState } from '../service/state.ts'
import type { State } from '../state/mod.ts'
import { FakeKubeApi } from '../test/fakes/kube-api.ts'
import { FakeKubelet } from '../test/fakes/kubelet.ts'
import { startNats } from '../test/fixtures/nats-server.ts'
import { percentile } from './relay.ts'

const NAMESPACE = 'bench'

export interface K8sWarmStartOptions {
  /** Warm starts measured (and as many baseline commands). */
  sessions: number
  /** Cold-pod demands measured. */
  demands: number
  warmPool: number
}

export interface Distribution {
  p50Ms: number
  p99Ms: number
  maxMs: number
  count: number
}

export interface K8sWarmStartResult {
  /** Command → first event through placement on a warm pod (claim included). */
  warmStart: Distribution
  /** Command → first event on a runner that already owns the session. */
  placedBaseline: Distribution
  /** warmStart p99 − placedBaseline p99: what a warm pod adds (target < 50 ms). */
  addedP99Ms: number
  /** Demand over NATS → answer with the pod created in the API. */
  coldDemand: Distribution
  /** Claim in the registry → replacement warm pod created in the API. */
  refill: Distribution
  /** Controller start → lease held and the whole warm pool created. */
  controllerStartMs: number
}

const DEFAULTS: K8sWarmStartOptions = { sessions: 200, demands: 100, warmPool: 4 }

/** A runner in a sandbox pod, reduced to what placement needs: take one session from the queue, claim it, answer. */
class FakePodRunner {
  readonly #place: Subscription
  #own: Subscription | undefined
  #taken = false

  constructor(bus: Bus, prefix: string, podName: string, state: State) {
    this.#place = bus.subscribe(
      `${prefix}.place`,
      (msg) => {
        // One session per pod: the first command wins, the pod leaves the queue.
        if (this.#taken) return
        this.#taken = true
        this.#place.unsubscribe()
        const { session_id, t } = JSON.parse(msg.data) as { session_id: string; t: number }
        const now = Date.now()
        void state.registry
          .create({ session_id, owner: podName, state: 'busy', cli_session_id: session_id, created_at: now, last_active: now, stats: emptyStats() })
          .then(() => {
            msg.respond(JSON.stringify({ ok: true, runner: podName }))
            bus.publish(`${prefix}.evt.${sessionToken(session_id)}`, JSON.stringify({ event: 'turn_started', t }))
          })
        // Later commands for the session come straight to this runner.
        this.#own = bus.subscribe(`${prefix}.runner.${podName}`, (cmd) => {
          const body = JSON.parse(cmd.data) as { session_id: string; t: number }
          cmd.respond(JSON.stringify({ ok: true }))
          bus.publish(`${prefix}.evt.${sessionToken(body.session_id)}`, JSON.stringify({ event: 'turn_started', t: body.t }))
        })
      },
      { queue: 'runners' },
    )
  }

  stop(): void {
    if (!this.#taken) this.#place.unsubscribe()
    this.#own?.unsubscribe()
  }
}

/** Runs the scenario; starts and stops its own NATS (or uses NATS_URL), fake API server and controller. */
export async function measureK8sWarmStart(options: Partial<K8sWarmStartOptions> = {}): Promise<K8sWarmStartResult> {
  const o = { ...DEFAULTS, ...options }
  const prefix = `k8sbench${process.pid}`
  const nats = await startNats()
  const kube = await FakeKubeApi.start()
  const kubelet = new FakeKubelet(kube, NAMESPACE)
  const bus = await NatsBus.connect(nats.url, { name: 'bench-k8s' })
  const silent = pino({ level: 'silent' })
  const state = await openServiceState(bus, resolveConfig({ nats: { url: nats.url, prefix }, state: { storage: 'memory' } }, {}), silent)
  const runners = new Map<string, FakePodRunner>()
  // The kubelet makes a pod ready; then its runner starts and joins the placement queue.
  const stopFollow = kube.onChange((type, resource, object) => {
    if (resource !== 'pods') return
    const name = object.metadata.name as string
    if (type === 'MODIFIED' && object.status?.phase === 'Running' && !runners.has(name) && !object.metadata.deletionTimestamp)
      runners.set(name, new FakePodRunner(bus, prefix, name, state))
    if (type === 'DELETED') {
      runners.get(name)?.stop()
      runners.delete(name)
    }
  })
  const config = ControllerConfigSchema.parse({
    pool: 'bench',
    warm_pool: o.warmPool,
    max_pods: o.warmPool + o.sessions + o.demands + 10,
    leader_election: { enabled: true },
  })
  const controller = new Controller({
    api: new ClientNodeKubeApi(kubeConfigFor(kube.url), NAMESPACE),
    config,
    sessions: registrySessionSource(state.registry, silent),
    demand: new BusDemandSource(bus, prefix),
    events: new RegistrySessionEvents(state.registry, async () => []),
    log: silent,
    clock: systemClock,
    identity: 'bench-controller',
  })
  const warmCount = () => kube.list('pods', NAMESPACE).filter((p) => p.metadata.labels[LABEL.state] === 'warm' && p.status?.phase === 'Running').length
  try {
    const started = performance.now()
    controller.start()
    await waitFor(() => kube.list('pods', NAMESPACE).length >= o.warmPool, 'the warm pool')
    const controllerStartMs = performance.now() - started
    await waitFor(() => warmCount() >= o.warmPool && runners.size >= o.warmPool, 'warm runners')

    const warmStart: number[] = []
    const placedBaseline: number[] = []
    const refill: number[] = []
    for (let i = 0; i < o.sessions; i++) {
      await waitFor(() => warmCount() >= o.warmPool && [...runners.values()].length >= o.warmPool, 'a refilled pool')
      const sessionId = `bench-${i}`
      const podsBefore = new Set(kube.list('pods', NAMESPACE).map((p) => p.metadata.name as string))
      const t0 = performance.now()
      const first = nextEvent(bus, prefix, sessionId)
      const reply = await bus.request(`${prefix}.place`, JSON.stringify({ session_id: sessionId, t: t0 }), { timeoutMs: 5_000 })
      await first
      warmStart.push(performance.now() - t0)
      const claimed = Date.now()
      const runner = (JSON.parse(reply.data) as { runner: string }).runner
      // Baseline: the next command of the same session goes straight to its runner.
      const t1 = performance.now()
      const again = nextEvent(bus, prefix, sessionId)
      await bus.request(`${prefix}.runner.${runner}`, JSON.stringify({ session_id: sessionId, t: t1 }), { timeoutMs: 5_000 })
      await again
      placedBaseline.push(performance.now() - t1)
      await waitFor(() => kube.list('pods', NAMESPACE).some((p) => !podsBefore.has(p.metadata.name)), 'the replacement pod')
      refill.push(Date.now() - claimed)
      // The session ends: its record goes, and the controller deletes its pod.
      await state.registry.delete(sessionId)
    }

    const coldDemand: number[] = []
    for (let i = 0; i < o.demands; i++) {
      const t0 = performance.now()
      const answer = await requestColdPod(bus, prefix, `cold-${i}`, 5_000)
      if (!answer.ok) throw new Error(`demand refused: ${answer.message}`)
      coldDemand.push(performance.now() - t0)
    }
    const placed = distribution(placedBaseline)
    const warm = distribution(warmStart)
    return {
      warmStart: warm,
      placedBaseline: placed,
      addedP99Ms: warm.p99Ms - placed.p99Ms,
      coldDemand: distribution(coldDemand),
      refill: distribution(refill),
      controllerStartMs,
    }
  } finally {
    stopFollow()
    await controller.stop()
    for (const runner of runners.values()) runner.stop()
    kubelet.stop()
    await state.close()
    await bus.close()
    await kube.close()
    await nats.stop()
  }
}

/** Prints the scenario's table (markdown), as bench/run.ts prints its own. */
export function printK8sWarmStart(result: K8sWarmStartResult): void {
  const ms = (v: number) => v.toFixed(2)
  const row = (name: string, d: Distribution, note: string) =>
    console.log(`| ${name} | ${d.count} | ${ms(d.p50Ms)} | ${ms(d.p99Ms)} | ${ms(d.maxMs)} | ${note} |`)
  console.log('\nKubernetes (fake API server, fake kubelet, real NATS + JetStream registry, real controller)\n')
  console.log('| scenario | n | p50 ms | p99 ms | max ms | note |')
  console.log('|---|---:|---:|---:|---:|---|')
  row(
    'warm start: command → first event via placement',
    result.warmStart,
    `adds ${ms(result.addedP99Ms)} ms at p99 over a placed runner (target < 50 ms: ${result.addedP99Ms < 50 ? 'met' : 'MISSED'})`,
  )
  row('placed runner: command → first event', result.placedBaseline, 'baseline')
  row('cold pod: demand → pod created (controller only)', result.coldDemand, 'excludes scheduling and container start')
  row('refill: claim → replacement pod created', result.refill, 'off the hot path')
  console.log(`\ncontroller start → lease + full warm pool created: ${ms(result.controllerStartMs)} ms`)
}

function nextEvent(bus: Bus, prefix: string, sessionId: string): Promise<void> {
  return new Promise((resolve) => {
    const sub = bus.subscribe(`${prefix}.evt.${sessionToken(sessionId)}`, () => {
      sub.unsubscribe()
      resolve()
    })
  })
}

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b)
  return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted.at(-1) ?? Number.NaN, count: sorted.length }
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`k8s bench: timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printK8sWarmStart(await measureK8sWarmStart())
