import { ServiceError } from '../../contract/mod.ts'
import type { Documents } from '../../state/mod.ts'
import { DEFAULT_TENANT } from './config.ts'

/** Who a session belongs to: written once, when a tenant first names the session id, never changed. */
export interface TenantClaim {
  tenant: string
  /** Epoch ms of the claim. */
  claimed_at: number
}

export interface SessionOwnersOptions {
  /**
   * Where claims are kept: a JetStream bucket shared by every gateway in production, a file in dev mode.
   * None: one tenant, nothing is checked or stored (a service without `auth.tenants`).
   */
  claims?: Documents<TenantClaim> | undefined
  /**
   * Whether a session with no claim already exists (it ran before tenants were configured): it is then
   * the tenant `default`'s, never the first tenant's that happens to name it.
   */
  existing?: ((sessionId: string) => Promise<boolean>) | undefined
  now?: () => number
}

/** Claims remembered here at most; the oldest are forgotten first (a miss costs one read of the bucket). */
const MAX_CACHED = 100_000

/**
 * Session ownership (issue 15, part 3). Session ids are the clients': the first tenant to name an id
 * (execute, attach, stop, stats, a REST session, a stream) claims it with a create-only write, and every
 * later request for that id from another tenant is answered SESSION_NOT_FOUND, exactly as for an id
 * nobody uses. Claims never change and are never removed (the session's events and conversation
 * outlive its REST deletion), so each gateway may keep them in memory once read.
 */
export class SessionOwners {
  readonly #claims: Documents<TenantClaim> | undefined
  readonly #existing: ((sessionId: string) => Promise<boolean>) | undefined
  readonly #now: () => number
  readonly #known = new Map<string, string>()
  readonly #pending = new Map<string, Promise<string>>()

  constructor(options: SessionOwnersOptions = {}) {
    this.#claims = options.claims
    this.#existing = options.existing
    this.#now = options.now ?? Date.now
  }

  /** False with one tenant: every session is everyone's, as without tenants. */
  get enabled(): boolean {
    return this.#claims !== undefined
  }

  /**
   * Lets `tenant` use the session: claims it when nobody has, passes when it is the tenant's own, and
   * throws SESSION_NOT_FOUND (the message a missing session gets) when it is another tenant's.
   */
  async admit(tenant: string, sessionId: string): Promise<void> {
    if (!this.#claims) return
    if ((await this.#ownerOrClaim(sessionId, tenant)) !== tenant) throw notFound(sessionId)
  }

  /** True when `tenant` may see the session (its own, or no tenancy). Claims nothing. */
  async owns(tenant: string, sessionId: string): Promise<boolean> {
    if (!this.#claims) return true
    const known = this.#known.get(sessionId)
    if (known !== undefined) return known === tenant
    const claim = await this.#claims.get(sessionId)
    if (claim) this.#remember(sessionId, claim.tenant)
    return claim?.tenant === tenant
  }

  #ownerOrClaim(sessionId: string, claimant: string): Promise<string> {
    const known = this.#known.get(sessionId)
    if (known !== undefined) return Promise.resolve(known)
    // One read (and at most one write) per id at a time on this gateway.
    let pending = this.#pending.get(sessionId)
    if (!pending) {
      pending = this.#claim(sessionId, claimant).finally(() => this.#pending.delete(sessionId))
      this.#pending.set(sessionId, pending)
    }
    return pending
  }

  async #claim(sessionId: string, claimant: string): Promise<string> {
    const claims = this.#claims!
    let claim = await claims.get(sessionId)
    if (!claim) {
      const tenant = (await this.#existing?.(sessionId)) ? DEFAULT_TENANT : claimant
      // Create-only: of two gateways (or two tenants) claiming at once, one wins and both learn which.
      claim = (await claims.insert(sessionId, { tenant, claimed_at: this.#now() })).doc
    }
    this.#remember(sessionId, claim.tenant)
    return claim.tenant
  }

  #remember(sessionId: string, tenant: string): void {
    this.#known.set(sessionId, tenant)
    if (this.#known.size > MAX_CACHED) this.#known.delete(this.#known.keys().next().value!)
  }
}

/** The answer to a session of another tenant: the same as to one that does not exist. */
export function notFound(sessionId: string): ServiceError {
  return new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`)
}
