import type { Logger } from 'pino'
import type { Clock } from './clock.ts'
import type { ControllerConfig } from './config.ts'
import type { CredentialRenewals } from './credentials/renewals.ts'
import type { Demand, DemandSource } from './demand.ts'
import type { KubeApi } from './kube/client.ts'
import { LeaderElector } from './lease.ts'
import type { PassLoop } from './passes.ts'
import type { PodInformer } from './pod-informer.ts'
import type { DemandAnswer } from './reconcile/view.ts'
import type { SessionSource } from './sessions.ts'
import type { WorldCaches } from './world/caches.ts'
import type { PendingDemands } from './world/demands.ts'

export interface LeadershipOptions {
  api: KubeApi
  clock: Clock
  log: Logger
  /** This replica's name in the lease. */
  identity: string
  election: ControllerConfig['leader_election']
  sessions: SessionSource
  demand: DemandSource
  informer: PodInformer
  passes: PassLoop
  demands: PendingDemands
  caches: WorldCaches
  renewals: CredentialRenewals | undefined
}

/**
 * What starts and stops with the lease. While this replica leads it watches
 * the registry, serves demand for cold pods and keeps the pod cache; when it
 * stops leading all of that stops, sessions waiting for a pod are told to ask
 * again, and what only a leader knew is forgotten (the next leader lists
 * again). Without leader election it leads from start to stop.
 */
export class Leadership {
  readonly elector: LeaderElector | undefined
  readonly #clock: Clock
  readonly #log: Logger
  readonly #identity: string
  readonly #sessions: SessionSource
  readonly #demand: DemandSource
  readonly #informer: PodInformer
  readonly #passes: PassLoop
  readonly #demands: PendingDemands
  readonly #caches: WorldCaches
  readonly #renewals: CredentialRenewals | undefined
  #leading = false
  #stopSessions: (() => void) | undefined
  #stopDemand: (() => void) | undefined

  constructor(options: LeadershipOptions) {
    this.#clock = options.clock
    this.#log = options.log
    this.#identity = options.identity
    this.#sessions = options.sessions
    this.#demand = options.demand
    this.#informer = options.informer
    this.#passes = options.passes
    this.#demands = options.demands
    this.#caches = options.caches
    this.#renewals = options.renewals
    const { election } = options
    if (election.enabled) {
      this.elector = new LeaderElector({
        api: options.api,
        clock: options.clock,
        log: options.log.child({ part: 'lease' }),
        name: election.lease_name,
        identity: options.identity,
        durationMs: election.lease_duration,
        renewIntervalMs: election.renew_interval,
        onStartedLeading: () => void this.#lead(),
        onStoppedLeading: () => this.#stepDown(),
      })
    }
  }

  get leading(): boolean {
    return this.#leading
  }

  /** Starts campaigning (or leads at once when leader election is off). */
  start(): void {
    if (this.elector) this.elector.start()
    else void this.#lead()
  }

  /** Stops campaigning (handing the lease back) and leading. */
  async stop(): Promise<void> {
    await this.elector?.stop()
    this.#stepDown()
  }

  /** A session without a warm runner asks for a pod of its own; only the leader answers. */
  requestPod(demand: Demand): Promise<DemandAnswer> {
    if (!this.#leading) return Promise.resolve({ ok: false, code: 'NOT_LEADER', message: `${this.#identity} does not lead` })
    const answer = this.#demands.wait(demand.session_id, this.#clock.now())
    this.#passes.trigger()
    return answer
  }

  async #lead(): Promise<void> {
    if (this.#leading) return
    this.#leading = true
    this.#log.info({ identity: this.#identity }, 'leading: reconciling sandbox pods')
    this.#stopSessions = this.#sessions.watch(() => this.#passes.trigger())
    this.#stopDemand = this.#demand.serve((demand) => this.requestPod(demand))
    await this.#informer.start()
  }

  #stepDown(): void {
    if (!this.#leading) return
    this.#leading = false
    this.#log.info({ identity: this.#identity }, 'not leading')
    this.#stopSessions?.()
    this.#stopDemand?.()
    this.#informer.stop()
    this.#passes.cancel()
    this.#demands.answerAll({ ok: false, code: 'NOT_LEADER', message: 'leadership moved; ask again' })
    this.#caches.forgetLeadership()
    this.#renewals?.stopAll()
  }
}
