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
import { LeaderElector } from './lease.ts'
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

export type { ControllerStats } from './stats.ts'

/**
 * The sandbox controller: while it leads, it reconciles sandbox pods with the
 * session registry (level-triggered, idempotent: every pass looks at the whole
 * world and asks only for what differs) and serves demand for cold pods.
 */
export class Controller {
  readonly #o: ControllerOptions
  readonly #log: Logger
  readonly #elector: LeaderElector | undefined
  readonly #informer: PodInformer
  readonly identity: string
  readonly stats: ControllerStats = newStats()

  #leading = false
  #stopSessions: (() => void) | undefined
  #stopDemand: (() => void) | undefined
  readonly #passes: PassLoop
  readonly #caches = new WorldCaches()
  readonly #demands = new PendingDemands()
  readonly #background = new Background()
  readonly #podEvents: PodEvents
  /** Per-session credentials: the placed pods' credential renewals. */
  readonly #renewals: CredentialRenewals | undefined
  readonly #actions: ActionRunner

  constructor(options: ControllerOptions) {
    this.#o = options
    this.#log = options.log
    this.identity = options.identity ?? `${os.hostname()}-${randomBytes(3).toString('hex')}`
    this.#informer = new PodInformer({ api: options.api, selector: poolSelector(options.config.pool), clock: options.clock, log: options.log.child({ part: 'informer' }), onChange: (pod) => this.#podSeen(pod) })
    this.#passes = new PassLoop({ clock: options.clock, leading: () => this.#leading, pass: () => this.#pass() })
    this.#podEvents = new PodEvents({ api: options.api, clock: options.clock, log: options.log, identity: this.identity, uidOf: (pod) => this.#informer.get(pod)?.metadata?.uid, background: this.#background })
    this.#renewals = options.assigner && new CredentialRenewals({ assigner: options.assigner, clock: options.clock, log: options.log, background: this.#background })
    const shared = { api: options.api, log: options.log, caches: this.#caches, demands: this.#demands, stats: this.stats, soon: () => this.#passes.soon() }
    this.#actions = new ActionRunner({
      ...shared,
      events: options.events,
      podEvents: this.#podEvents,
      pods: new SandboxPods({ ...shared, config: options.config, assigner: options.assigner, random: options.random }),
      placement: options.assigner && this.#renewals && new Placement({ ...shared, assigner: options.assigner, renewals: this.#renewals, clock: options.clock }),
    })
    const election = options.config.leader_election
    if (election.enabled) {
      this.#elector = new LeaderElector({
        api: options.api,
        clock: options.clock,
        log: options.log.child({ part: 'lease' }),
        name: election.lease_name,
        identity: this.identity,
        durationMs: election.lease_duration,
        renewIntervalMs: election.renew_interval,
        onStartedLeading: () => void this.#startLeading(),
        onStoppedLeading: () => this.#stopLeading(),
      })
    }
  }

  get leading(): boolean {
    return this.#leading
  }

  get informer(): PodInformer {
    return this.#informer
  }

  get elector(): LeaderElector | undefined {
    return this.#elector
  }

  /** Starts campaigning (or leads at once when leader election is off). */
  start(): void {
    if (this.#elector) this.#elector.start()
    else void this.#startLeading()
  }

  async stop(): Promise<void> {
    await this.#elector?.stop()
    this.#stopLeading()
    await this.#passes.settled()
    await this.#background.settled()
  }

  #podSeen(pod: string | undefined): void {
    // The watch showed the pod (maybe already deleted): it is no longer on its way.
    if (pod !== undefined) this.#caches.seen(pod)
    this.trigger()
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
    if (!this.#leading) return Promise.resolve({ ok: false, code: 'NOT_LEADER', message: `${this.identity} does not lead` })
    const answer = this.#demands.wait(demand.session_id, this.#o.clock.now())
    this.trigger()
    return answer
  }

  async #startLeading(): Promise<void> {
    if (this.#leading) return
    this.#leading = true
    this.#log.info({ identity: this.identity }, 'leading: reconciling sandbox pods')
    this.#stopSessions = this.#o.sessions.watch(() => this.trigger())
    this.#stopDemand = this.#o.demand.serve((demand) => this.requestPod(demand))
    await this.#informer.start()
  }

  #stopLeading(): void {
    if (!this.#leading) return
    this.#leading = false
    this.#log.info({ identity: this.identity }, 'not leading')
    this.#stopSessions?.()
    this.#stopDemand?.()
    this.#informer.stop()
    this.#passes.cancel()
    this.#demands.answerAll({ ok: false, code: 'NOT_LEADER', message: 'leadership moved; ask again' })
    this.#caches.forgetLeadership()
    this.#renewals?.stopAll()
  }

  async #pass(): Promise<void> {
    if (!this.#leading || !this.#informer.synced) return
    const { clock, config } = this.#o
    const started = performance.now()
    const report = (errors: number) => this.#o.observer?.reconciled((performance.now() - started) / 1000, errors)
    let sessions
    try {
      sessions = await this.#o.sessions.list()
    } catch (err) {
      this.#log.warn({ err }, 'listing sessions failed; retrying')
      report(1)
      this.#passes.backoff()
      return
    }
    this.stats.passes++
    const now = clock.now()
    this.#demands.expire(now)
    const world = buildWorld({ now, config, pods: this.#informer.pods(), sessions, demands: this.#demands.sessions(), caches: this.#caches, placesSessions: this.#o.assigner !== undefined })
    this.#renewals?.follow(this.#informer.pods(), (pod) => this.#caches.isPlacing(pod))
    const plan = planReconcile(world)
    const results = await Promise.all(plan.actions.map((action) => this.#actions.run(action, world.now)))
    report(results.filter((ok) => !ok).length)
    if (results.includes(false)) this.#passes.backoff()
    else this.#passes.succeeded()
    const next = Math.min(world.now + config.resync_interval, ...plan.wakeAt.map((at) => at + 1))
    this.#passes.wake(next)
  }
}
