import os from 'node:os'
import { randomBytes } from 'node:crypto'
import type { V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Clock } from './clock.ts'
import type { ControllerConfig } from './config.ts'
import type { Demand, DemandSource } from './demand.ts'
import type { SessionAssigner } from './credentials/assigner.ts'
import type { SessionEvents } from './events.ts'
import { apiStatus, isConflict, isNotFound, type KubeApi } from './kube/client.ts'
import { ANNOTATION, LABEL, poolSelector, sessionLabelValue, MANAGED_BY } from './labels.ts'
import { LeaderElector } from './lease.ts'
import type { ControllerObserver } from './observer.ts'
import { PodInformer } from './pod-informer.ts'
import { buildSandboxPod, newPodName, POD_CREDS_KEY, podCredentialsSecret, type PodPurpose } from './pod-spec.ts'
import { planReconcile } from './reconcile/plan.ts'
import type { Action, DemandAnswer } from './reconcile/view.ts'
import type { SessionSource } from './sessions.ts'
import { actionKey } from './actions/key.ts'
import { buildWorld } from './world/build.ts'
import { WorldCaches, type Undo } from './world/caches.ts'
import { Background } from './background.ts'
import { CredentialRenewals } from './credentials/renewals.ts'
import { PassLoop } from './passes.ts'
import { PodEvents } from './pod-events.ts'
import { newStats, type ControllerStats } from './stats.ts'
import { PendingDemands } from './world/demands.ts'

/** A pod whose runner did not listen for its assignment is passed over this long (it is still starting). */
const NOT_LISTENING_MS = 500

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

  constructor(options: ControllerOptions) {
    this.#o = options
    this.#log = options.log
    this.identity = options.identity ?? `${os.hostname()}-${randomBytes(3).toString('hex')}`
    this.#informer = new PodInformer({ api: options.api, selector: poolSelector(options.config.pool), clock: options.clock, log: options.log.child({ part: 'informer' }), onChange: (pod) => this.#podSeen(pod) })
    this.#passes = new PassLoop({ clock: options.clock, leading: () => this.#leading, pass: () => this.#pass() })
    this.#podEvents = new PodEvents({ api: options.api, clock: options.clock, log: options.log, identity: this.identity, uidOf: (pod) => this.#informer.get(pod)?.metadata?.uid, background: this.#background })
    this.#renewals = options.assigner && new CredentialRenewals({ assigner: options.assigner, clock: options.clock, log: options.log, background: this.#background })
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
    const results = await Promise.all(plan.actions.map((action) => this.#apply(action, world.now)))
    report(results.filter((ok) => !ok).length)
    if (results.includes(false)) this.#passes.backoff()
    else this.#passes.succeeded()
    const next = Math.min(world.now + config.resync_interval, ...plan.wakeAt.map((at) => at + 1))
    this.#passes.wake(next)
  }

  /** Carries out one action; false when it failed in a way worth a back-off. */
  async #apply(action: Action, now: number): Promise<boolean> {
    const { api } = this.#o
    /** Takes back the bookkeeping of the action should its API call fail. */
    let undo: Undo | undefined
    try {
      switch (action.kind) {
        case 'create':
          return await this.#create(action.purpose, now)
        case 'assign': {
          undo = this.#caches.changing(action.pod, action.resourceVersion)
          await api.patchPodMetadata(action.pod, action.resourceVersion, {
            labels: { [LABEL.state]: 'assigned', [LABEL.session]: sessionLabelValue(action.sessionId) },
            annotations: { [ANNOTATION.sessionId]: action.sessionId, [ANNOTATION.assignedAt]: String(now), [ANNOTATION.demandFor]: null },
          })
          this.stats.assigned++
          this.#log.info({ pod: action.pod, session_id: action.sessionId }, 'pod assigned to its session')
          return true
        }
        case 'warm':
          undo = this.#caches.changing(action.pod, action.resourceVersion)
          await api.patchPodMetadata(action.pod, action.resourceVersion, { labels: { [LABEL.state]: 'warm' }, annotations: { [ANNOTATION.demandFor]: null } })
          return true
        case 'delete':
          undo = this.#caches.deleting(action.pod, action.reason, now)
          await api.deletePod(action.pod)
          this.stats.deleted++
          this.#log.info({ pod: action.pod, reason: action.reason }, `pod deleted: ${action.message}`)
          this.#podEvents.record(action.pod, action.reason, action.message, action.reason === 'Surplus' || action.reason === 'SessionClosed' ? 'Normal' : 'Warning')
          return true
        case 'fail': {
          undo = this.#caches.report(actionKey(action), now)
          if (undo === undefined) return true
          this.stats.failures++
          this.#log.warn({ session_id: action.sessionId, pod: action.pod, code: action.code }, action.message)
          this.#podEvents.record(action.pod, action.code, action.message, 'Warning')
          await this.#o.events.fail(action.sessionId, action.code, action.message)
          return true
        }
        case 'release': {
          undo = this.#caches.report(actionKey(action), now)
          if (undo === undefined) return true
          await this.#o.events.release(action.sessionId, action.pod)
          return true
        }
        case 'answer':
          this.#answer(action.sessionId, action.answer)
          return true
        case 'place':
          return await this.#place(action.pod, action.resourceVersion, action.sessionId, now)
      }
    } catch (err) {
      undo?.()
      if (isConflict(err) || isNotFound(err)) {
        // Stale cache: the watch brings the pod's new version (or its deletion) and triggers the next pass.
        this.stats.conflicts++
        this.#log.debug({ action: action.kind, status: apiStatus(err) }, 'stale pod version; the next pass retries')
        this.#passes.soon()
        return true
      }
      this.#log.warn({ err, action: action.kind }, 'reconcile action failed')
      return false
    }
  }

  async #create(purpose: PodPurpose, now: number): Promise<boolean> {
    const { api, config } = this.#o
    const name = newPodName(config.pool, this.#o.random)
    const forget = this.#caches.created(name, purpose, now)
    const assigner = this.#o.assigner
    const warmCreds = assigner?.warmPod(name)
    const pod: V1Pod = buildSandboxPod({ name, pool: config.pool, namespace: api.namespace, settings: config.sandbox, purpose, credentials: warmCreds && { inboxPrefix: warmCreds.inboxPrefix } })
    try {
      const created = await api.createPod(pod)
      if (warmCreds !== undefined) {
        // The pod's own credential, in a Secret the pod owns (deleted with it); its container waits for it.
        await api.createSecret({
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'Opaque',
          metadata: {
            name: podCredentialsSecret(name),
            namespace: api.namespace,
            labels: { [LABEL.managedBy]: MANAGED_BY, [LABEL.pool]: config.pool },
            ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid: created.metadata!.uid!, controller: true }],
          },
          stringData: { [POD_CREDS_KEY]: warmCreds.creds },
        })
      }
    } catch (err) {
      forget()
      if (isConflict(err)) {
        this.stats.conflicts++
        this.#passes.soon()
        return true
      }
      this.#log.warn({ err, pod: name }, 'creating a sandbox pod failed')
      if (purpose.kind === 'cold') this.#answer(purpose.sessionId, { ok: false, code: 'INTERNAL', message: `creating a pod failed: ${(err as Error).message.split('\n')[0]}` })
      return false
    }
    this.stats.created++
    this.#log.info({ pod: name, purpose: purpose.kind, ...(purpose.kind === 'cold' && { session_id: purpose.sessionId }) }, 'sandbox pod created')
    // With per-session credentials the demand is answered once the session is placed on it.
    if (purpose.kind === 'cold' && assigner === undefined) this.#answer(purpose.sessionId, { ok: true, pod: name, created: true })
    return true
  }

  /**
   * Per-session credentials: hands `pod` the session with a credential for it, labels the pod
   * assigned, answers the session's demand, and keeps the credential renewed.
   */
  async #place(pod: string, resourceVersion: string, sessionId: string, now: number): Promise<boolean> {
    const assigner = this.#o.assigner!
    const placed = this.#caches.placing(pod)
    try {
      const started = performance.now()
      const result = await assigner.assign(pod, sessionId)
      if (!result.ok) {
        if (result.reason === 'not-listening') {
          this.#caches.notListening(pod, this.#o.clock.now() + NOT_LISTENING_MS)
          this.#passes.soon()
          return true
        }
        // It may hold the credential now, or not: it is not used again.
        this.#log.warn({ pod, session_id: sessionId, reason: result.reason }, `assigning a session failed: ${result.message}`)
        this.#caches.deleting(pod, 'Unassignable', now)
        await this.#o.api.deletePod(pod)
        this.stats.deleted++
        this.#passes.soon()
        return true
      }
      this.#caches.changing(pod, resourceVersion)
      // The pod serves the session now, whatever the labels say: the gateway may send at once.
      this.#answer(sessionId, { ok: true, pod, created: false, assigned: true })
      this.#renewals!.renewLater(pod, sessionId, result.expiresAt)
      this.#log.info({ pod, session_id: sessionId, ms: Math.round(performance.now() - started) }, 'session placed on its pod with its own credential')
      await this.#o.api.patchPodMetadata(pod, resourceVersion, {
        labels: { [LABEL.state]: 'assigned', [LABEL.session]: sessionLabelValue(sessionId) },
        annotations: { [ANNOTATION.sessionId]: sessionId, [ANNOTATION.assignedAt]: String(now), [ANNOTATION.demandFor]: null },
      })
      this.stats.assigned++
      return true
    } finally {
      placed()
    }
  }

  #answer(sessionId: string, answer: DemandAnswer): void {
    this.#demands.answer(sessionId, answer)
  }
}
