import { V1MicroTime, type V1Lease } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Clock } from './clock.ts'
import { isConflict, type KubeApi } from './kube/client.ts'
import { LABEL, MANAGED_BY } from './labels.ts'

/**
 * Leader election with a coordination.k8s.io Lease, as client-go does it: the
 * holder renews; another candidate takes the lease over only after it has
 * seen the same lease record unchanged for a whole lease duration on its own
 * clock (so clock skew between nodes does not matter); every write carries
 * the resourceVersion it read, so two candidates cannot both win (409).
 */

/** What a candidate remembers of the lease it last read. */
export interface LeaseObservation {
  /** resourceVersion of the lease record. */
  version: string
  /** Local time when that version was first seen. */
  seenAt: number
}

export type LeaseDecision = { action: 'create' } | { action: 'renew' } | { action: 'acquire' } | { action: 'wait'; until: number; holder: string }

/** What to do with the lease as read now: pure, tested with a table. */
export function decideLease(input: {
  lease: V1Lease | undefined
  identity: string
  now: number
  observed: LeaseObservation | undefined
  durationMs: number
}): LeaseDecision {
  const { lease, identity, now, observed } = input
  if (lease === undefined) return { action: 'create' }
  const holder = lease.spec?.holderIdentity ?? ''
  if (holder === identity) return { action: 'renew' }
  if (holder === '') return { action: 'acquire' }
  const durationMs = lease.spec?.leaseDurationSeconds !== undefined ? lease.spec.leaseDurationSeconds * 1000 : input.durationMs
  const version = lease.metadata?.resourceVersion ?? ''
  const seenAt = observed?.version === version ? observed.seenAt : now
  if (now >= seenAt + durationMs) return { action: 'acquire' }
  return { action: 'wait', until: seenAt + durationMs, holder }
}

/** The Lease object a candidate writes. */
export function buildLease(options: { name: string; namespace: string; identity: string; durationMs: number; now: number; previous?: V1Lease }): V1Lease {
  const { previous, identity, now } = options
  const kept = previous?.spec?.holderIdentity === identity
  const transitions = previous?.spec?.leaseTransitions ?? 0
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels: { [LABEL.managedBy]: MANAGED_BY },
      ...(previous?.metadata?.resourceVersion !== undefined && { resourceVersion: previous.metadata.resourceVersion }),
    },
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(options.durationMs / 1000)),
      acquireTime: kept && previous?.spec?.acquireTime !== undefined ? new V1MicroTime(previous.spec.acquireTime) : new V1MicroTime(now),
      renewTime: new V1MicroTime(now),
      leaseTransitions: previous === undefined ? 0 : kept ? transitions : transitions + 1,
    },
  }
}

export interface LeaderElectorOptions {
  api: KubeApi
  clock: Clock
  log: Logger
  name: string
  identity: string
  durationMs: number
  renewIntervalMs: number
  onStartedLeading(): void
  onStoppedLeading(): void
}

/** Runs the election loop: calls onStartedLeading / onStoppedLeading as leadership comes and goes. */
export class LeaderElector {
  readonly #o: LeaderElectorOptions
  #observed: LeaseObservation | undefined
  #leading = false
  #lastRenew = 0
  #cancelTimer: (() => void) | undefined
  #stopped = false
  #running: Promise<void> | undefined

  constructor(options: LeaderElectorOptions) {
    if (options.renewIntervalMs >= options.durationMs) throw new Error('leader_election.renew_interval must be shorter than lease_duration')
    this.#o = options
  }

  get leading(): boolean {
    return this.#leading
  }

  start(): void {
    this.#tick()
  }

  /** One election round now (tests call it; the timer calls it every renew interval). */
  tick(): Promise<void> {
    this.#cancelTimer?.()
    this.#tick()
    return this.#running ?? Promise.resolve()
  }

  /** Stops campaigning; a leader gives the lease up so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#cancelTimer?.()
    await this.#running
    if (!this.#leading) return
    this.#setLeading(false)
    try {
      const lease = await this.#o.api.getLease(this.#o.name)
      if (lease?.spec?.holderIdentity === this.#o.identity) {
        await this.#o.api.replaceLease({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } })
      }
    } catch (err) {
      this.#o.log.warn({ err }, 'could not release the leader lease')
    }
  }

  #tick(): void {
    if (this.#stopped || this.#running) return
    this.#running = this.#round()
      .catch((err) => this.#o.log.warn({ err }, 'leader election round failed'))
      .finally(() => {
        this.#running = undefined
        if (!this.#stopped) this.#cancelTimer = this.#o.clock.after(this.#o.renewIntervalMs, () => this.#tick())
      })
  }

  async #round(): Promise<void> {
    const { api, clock, identity, name, durationMs } = this.#o
    let won = false
    try {
      const lease = await api.getLease(name)
      const now = clock.now()
      const decision = decideLease({ lease, identity, now, observed: this.#observed, durationMs })
      if (lease !== undefined) {
        const version = lease.metadata?.resourceVersion ?? ''
        if (this.#observed?.version !== version) this.#observed = { version, seenAt: now }
      }
      if (decision.action === 'wait') {
        if (this.#leading) this.#setLeading(false)
        return
      }
      const body = buildLease({ name, namespace: api.namespace, identity, durationMs, now, ...(lease !== undefined && { previous: lease }) })
      const written = decision.action === 'create' ? await api.createLease(body) : await api.replaceLease(body)
      this.#observed = { version: written.metadata?.resourceVersion ?? '', seenAt: now }
      this.#lastRenew = now
      won = true
      if (decision.action !== 'renew') this.#o.log.info({ identity, lease: name }, 'became the leader')
    } catch (err) {
      // 409: another candidate wrote first; anything else: the API is unreachable. Either way, not renewed.
      if (!isConflict(err)) this.#o.log.warn({ err }, 'leader lease read or write failed')
    }
    if (won) {
      if (!this.#leading) this.#setLeading(true)
    } else if (this.#leading && clock.now() - this.#lastRenew >= durationMs - this.#o.renewIntervalMs) {
      // Step down before anyone else may take over (they wait a whole lease duration).
      this.#o.log.warn({ identity }, 'lost the leader lease (renewals failing)')
      this.#setLeading(false)
    }
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading
    if (leading) this.#o.onStartedLeading()
    else this.#o.onStoppedLeading()
  }
}
