/**
 * A controller against the fake API server through the real client-node:
 * manual clock, in-memory session registry and demand, recorded session
 * events (whose `release` clears the owner in the registry, as the real
 * adapter's compare-and-set does).
 */
import type { V1Secret } from '@kubernetes/client-node'
import pino from 'pino'
import { Controller } from '../../controller/controller.ts'
import { ControllerConfigSchema, type ControllerConfigInput } from '../../controller/config.ts'
import { MemoryDemandSource } from '../../controller/demand.ts'
import { MemorySessionEvents } from '../../controller/events.ts'
import type { SessionAssigner } from '../../controller/credentials/assigner.ts'
import { ClientNodeKubeApi } from '../../controller/kube/client.ts'
import { kubeConfigFor } from '../../controller/kube/connect.ts'
import type { ControllerObserver } from '../../controller/observer.ts'
import { MemorySessionSource } from '../../controller/sessions.ts'
import { FakeKubeApi } from '../fakes/kube-api.ts'
import { FakeKubelet } from '../fakes/kubelet.ts'
import { ManualClock } from '../fixtures/manual-clock.ts'

export const NAMESPACE = 'sandboxes'

export class RegistryEvents extends MemorySessionEvents {
  readonly #sessions: MemorySessionSource
  constructor(sessions: MemorySessionSource) {
    super()
    this.#sessions = sessions
  }
  override async release(sessionId: string, runnerId: string): Promise<void> {
    await super.release(sessionId, runnerId)
    if (this.#sessions.get(sessionId)?.owner === runnerId) this.#sessions.update(sessionId, { owner: undefined })
  }
}

/** The fake API server holds no Secrets: the ones the controller creates (per-session credentials) are kept here. */
class KubeApiKeepingSecrets extends ClientNodeKubeApi {
  readonly #secrets: V1Secret[]
  constructor(url: string, secrets: V1Secret[]) {
    super(kubeConfigFor(url), NAMESPACE)
    this.#secrets = secrets
  }
  override async createSecret(secret: V1Secret): Promise<void> {
    this.#secrets.push(structuredClone(secret))
  }
}

export interface Harness {
  clock: ManualClock
  api: FakeKubeApi
  kubelet: FakeKubelet
  sessions: MemorySessionSource
  demand: MemoryDemandSource
  events: RegistryEvents
  controller: Controller
  /** Secrets the controllers created, in order. */
  secrets: V1Secret[]
  /** A second replica on the same API, registry and demand. */
  replica(identity: string): Controller
  /** Sandbox pods in the fake, by name. */
  pods(): Record<string, any>[]
  close(): Promise<void>
}

const silent = pino({ level: 'silent' })

export async function startHarness(
  config: ControllerConfigInput = {},
  options: { autoReady?: boolean; start?: boolean; identity?: string; observer?: ControllerObserver; assigner?: SessionAssigner } = {},
): Promise<Harness> {
  const clock = new ManualClock()
  const api = await FakeKubeApi.start({ now: () => clock.now() })
  const kubelet = new FakeKubelet(api, NAMESPACE, { autoReady: options.autoReady ?? true, now: () => clock.now() })
  const sessions = new MemorySessionSource()
  const demand = new MemoryDemandSource()
  const events = new RegistryEvents(sessions)
  const parsed = ControllerConfigSchema.parse({ leader_election: { enabled: false }, ...config })
  const controllers: Controller[] = []
  const secrets: V1Secret[] = []
  const make = (identity: string) => {
    const c = new Controller({
      api: new KubeApiKeepingSecrets(api.url, secrets),
      config: parsed,
      sessions,
      demand,
      events,
      log: silent,
      clock,
      identity,
      ...(options.observer && { observer: options.observer }),
      ...(options.assigner && { assigner: options.assigner }),
    })
    controllers.push(c)
    return c
  }
  const controller = make(options.identity ?? 'controller-0')
  if (options.start ?? true) controller.start()
  return {
    clock,
    api,
    kubelet,
    sessions,
    demand,
    events,
    controller,
    secrets,
    replica: make,
    pods: () => api.list('pods', NAMESPACE),
    async close() {
      await Promise.all(controllers.map((c) => c.stop()))
      kubelet.stop()
      await api.close()
    },
  }
}

/** Waits (real time, polling) until `check` holds; the bound only covers loopback I/O, never a timer. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Moves the manual clock on in small steps until `check` holds, so retry and
 * back-off timers fire; bounded by steps of fake time, not by real time.
 */
export async function drive(h: Harness, check: () => boolean, what: string, stepMs = 100, steps = 200): Promise<void> {
  for (let i = 0; i < steps; i++) {
    if (check()) return
    await h.controller.settled()
    h.clock.advance(stepMs)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await until(check, what)
}

export const byState = (pods: Record<string, any>[], state: string) =>
  pods.filter((p) => p.metadata.labels['agent-runtime.io/state'] === state && !p.metadata.deletionTimestamp)
