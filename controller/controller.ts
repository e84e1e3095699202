import os from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import { Placement } from './actions/place.ts'
import { ActionRunner } from './actions/run.ts'
import { Background } from './background.ts'
import type { Clock } from './clock.ts'
import type { ControllerConfig } from './config.ts'
import type { SessionAssigner } from './credentials/assigner.ts'
import { CredentialRenewals } from './credentials/renewals.ts'
import type { Demand, DemandSource } from './demand.ts'
import type { SessionEvents } from './events.ts'
import type { KubeApi } from './kube/client.ts'
import { poolSelector } from './labels.ts'
import { Leadership } from './leadership.ts'
import type { LeaderElector } from './lease.ts'
import type { ControllerObserver } from './observer.ts'
import { PassLoop } from './passes.ts'
import { PodEvents } from './pod-events.ts'
import { PodInformer } from './pod-informer.ts'
import { planReconcile } from './reconcile/plan.ts'
import type { DemandAnswer } from './reconcile/view.ts'
import { SandboxPods } from './sandbox-pods.ts'
import type { SessionSource } from './sessions.ts'
import { newStats, type ControllerStats } from './stats.ts'
import { buildWorld } from './world/build.ts'
import { WorldCaches } from './world/caches.ts'
import { PendingDemands } from './world/demands.ts'

/** What a Controller works with: the Kubernetes API, its settings, the registry, demand, and where session errors go. */
export interface ControllerOptions {
  api: KubeApi
  config: ControllerConfig
  sessions: SessionSource
  demand: DemandSource
  events: SessionEvents
  log: Logger
  clock: Clock
  /** This replica's name in the lease (the pod name in a cluster). */
  identity?: string
  /** Random bytes for pod names (tests make them predictable). */
  random?: (bytes: number) => Buffer
  /** Told how each reconcile pass went (the controller's /metrics). */
  observer?: ControllerObserver
  /**
   * Per-session credentials (controller.session_credentials): pods get their own credential in a
   * Secret, and the controller places sessions itself, handing each pod its session's credential.
   */
  assigner?: SessionAssigner | undefined
}

/**
 * The sandbox controller: while it leads, it reconciles sandbox pods with the
 * session registry (level-triggered, idempotent: every pass looks at the whole
 * world and asks only for what differs) and serves demand for cold pods.
 * A pass lists the sessions, builds the world (world/), plans (reconcile/) and
 * runs the plan (actions/); leadership.ts says what runs only while leading.
 */
export class Controller {
  readonly identity: string
  readonly stats: ControllerStats = newStats()
  readonly #config: ControllerConfig
  readonly #sessions: SessionSource
  readonly #clock: Clock
  readonly #log: Logger
  readonly #observer: ControllerObserver | undefined
  /** Per-session credentials: the controller places every session itself. */
  readonly #placesSessions: boolean
  readonly #informer: PodInformer
  readonly #leadership: Leadership
  readonly #passes: PassLoop
  readonly #caches = new WorldCaches()
  readonly #demands = new PendingDemands()
  readonly #background = new Background()
  /** Per-session credentials: the placed pods' credential renewals. */
  readonly #renewals: CredentialRenewals | undefined
  readonly #actions: ActionRunner

  constructor(options: ControllerOptions) {
    const { api, config, clock, log, assigner } = options
    this.identity = options.identity ?? `${os.hostname()}-${randomBytes(3).toString('hex')}`
    this.#config = config
    this.#sessions = options.sessions
    this.#clock = clock
    this.#log = log
    this.#observer = options.observer
    this.#placesSessions = assigner !== undefined
    this.#informer = new PodInformer({
      api,
      selector: poolSelector(config.pool),
      clock,
      log: log.child({ part: 'informer' }),
      onChange: (pod) => this.#podSeen(pod),
    })
    this.#passes = new PassLoop({ clock, leading: () => this.#leadership.leading, pass: () => this.#pass() })
    this.#renewals = assigner && new CredentialRenewals({ assigner, clock, log, background: this.#background })
    const shared = { api, log, caches: this.#caches, demands: this.#demands, stats: this.stats, soon: () => this.#passes.soon() }
    this.#actions = new ActionRunner({
      ...shared,
      events: options.events,
      podEvents: new PodEvents({
        api,
        clock,
        log,
        identity: this.identity,
        uidOf: (pod) => this.#informer.get(pod)?.metadata?.uid,
        background: this.#background,
      }),
      pods: new SandboxPods({ ...shared, config, assigner, random: options.random }),
      placement: assigner && this.#renewals && new Placement({ ...shared, assigner, renewals: this.#renewals, clock }),
    })
    this.#leadership = new Leadership({
      api,
      clock,
      log,
      identity: this.identity,
      election: config.leader_election,
      sessions: options.sessions,
      demand: options.demand,
      informer: this.#informer,
      passes: this.#passes,
      demands: this.#demands,
      caches: this.#caches,
      renewals: this.#renewals,
    })
  }

  get leading(): boolean {
    return this.#leadership.leading
  }

  get informer(): PodInformer {
    return this.#informer
  }

  get elector(): LeaderElector | undefined {
    return this.#leadership.elector
  }

  /** Starts campaigning (or leads at once when leader election is off). */
  start(): void {
    this.#leadership.start()
  }

  async stop(): Promise<void> {
    await this.#leadership.stop()
    await this.#passes.settled()
    await this.#background.settled()
  }

  /** Asks for a reconcile pass soon; passes never overlap, and triggers during a pass coalesce into one more. */
  trigger(): void {
    this.#passes.trigger()
  }

  /** Resolves when no pass runs or is due (tests). */
  async settled(): Promise<void> {
    await this.#passes.settled()
  }

  /** A session without a warm runner asks for a pod of its own. */
  requestPod(demand: Demand): Promise<DemandAnswer> {
    return this.#leadership.requestPod(demand)
  }

  #podSeen(pod: string | undefined): void {
    // The watch showed the pod (maybe already deleted): it is no longer on its way.
    if (pod !== undefined) this.#caches.seen(pod)
    this.trigger()
  }

  /** One reconcile pass: the sessions, the world, the plan, its actions; then when the next is due. */
  async #pass(): Promise<void> {
    if (!this.leading || !this.#informer.synced) return
    const config = this.#config
    const started = performance.now()
    const report = (errors: number) => this.#observer?.reconciled((performance.now() - started) / 1000, errors)
    let sessions
    try {
      sessions = await this.#sessions.list()
    } catch (err) {
      this.#log.warn({ err }, 'listing sessions failed; retrying')
      report(1)
      this.#passes.backoff()
      return
    }
    this.stats.passes++
    const now = this.#clock.now()
    this.#demands.expire(now)
    const pods = this.#informer.pods()
    const world = buildWorld({ now, config, pods, sessions, demands: this.#demands.sessions(), caches: this.#caches, placesSessions: this.#placesSessions })
    this.#renewals?.follow(pods, (pod) => this.#caches.isPlacing(pod))
    const plan = planReconcile(world)
    const results = await Promise.all(plan.actions.map((action) => this.#actions.run(action, world.now)))
    report(results.filter((ok) => !ok).length)
    if (results.includes(false)) this.#passes.backoff()
    else this.#passes.succeeded()
    this.#passes.wake(Math.min(world.now + config.resync_interval, ...plan.wakeAt.map((at) => at + 1)))
  }
}
