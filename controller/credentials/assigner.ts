/**
 * Placement with per-session credentials: the controller gives each warm pod
 * a credential that reaches only its own assignment subject, and hands a pod
 * its session together with a `session-runner` credential for that session
 * over that subject (a request the pod answers once it serves the session).
 * Renewals go the same way before the credential expires.
 */
import { BusNoRespondersError, BusTimeoutError, type Bus } from '../../bus/mod.ts'
import { AssignmentAnswer, type Assignment } from '../../contract/assignment.ts'
import { inboxPrefixFor, permissionsFor } from '../../contract/permissions.ts'
import { subjects } from '../../contract/subjects.ts'
import { createUser, type KeyPair } from '@nats-io/nkeys'
import { encodeUserJwt, formatCreds } from './jwt.ts'
import { SessionCredentialMinter } from './mint.ts'

/** How long a pod has to connect with its session credential and answer. */
const ASSIGN_TIMEOUT_MS = 10_000

export interface AssignerOptions {
  bus: Bus
  prefix: string
  /** The account key, or one of its signing keys, that the server trusts. */
  signer: KeyPair
  /** The account's public key when `signer` is a signing key. */
  account?: string | undefined
  /** Lifetime of a session credential; it is renewed after two thirds of it. */
  ttlMs: number
  now?: () => number
}

/** What a pod said to its assignment. */
export type AssignResult =
  | { ok: true; expiresAt: number }
  /** Nobody listens on the pod's subject yet (its runner is still starting): try again soon. */
  | { ok: false; reason: 'not-listening' }
  | { ok: false; reason: 'refused' | 'timeout'; message: string }

/** The warm pod credential a pod's Secret holds: `pod.creds` (the file) and its inbox prefix. */
export interface WarmPodCredentials {
  creds: string
  inboxPrefix: string
}

/** Mints the pods' credentials and sends assignments and renewals. */
export class SessionAssigner {
  readonly #o: AssignerOptions
  readonly #minter: SessionCredentialMinter

  constructor(options: AssignerOptions) {
    this.#o = options
    this.#minter = new SessionCredentialMinter({
      signer: options.signer,
      account: options.account,
      prefix: options.prefix,
      ttlMs: options.ttlMs,
      ...(options.now && { now: options.now }),
    })
  }

  get ttlMs(): number {
    return this.#o.ttlMs
  }

  /**
   * A warm pod's own credential: it may receive its assignment and answer it, nothing else. It
   * does not expire (a warm pod may wait long); it reaches no session, and the pod's Secret goes
   * with the pod (owner reference).
   */
  warmPod(pod: string): WarmPodCredentials {
    const { signer, account, prefix } = this.#o
    const spec = { role: 'warm-pod' as const, prefix, runnerId: pod }
    const user = createUser()
    const jwt = encodeUserJwt(signer, {
      subject: user.getPublicKey(),
      name: `warm-pod ${pod}`,
      permissions: permissionsFor(spec),
      ...(account !== undefined && account !== signer.getPublicKey() && { issuerAccount: account }),
      issuedAt: Math.floor((this.#o.now ?? Date.now)() / 1000),
    })
    return { creds: formatCreds(jwt, user.getSeed()), inboxPrefix: inboxPrefixFor(spec) }
  }

  /** Hands `pod` the session (or a renewed credential for it) and waits for its answer. */
  async assign(pod: string, sessionId: string): Promise<AssignResult> {
    const minted = this.#minter.mint(sessionId, pod)
    const assignment: Assignment = { session_id: sessionId, creds: minted.creds, inbox_prefix: minted.inboxPrefix, expires_at: minted.expiresAt }
    try {
      const reply = await this.#o.bus.request(subjects(this.#o.prefix).assign(pod), JSON.stringify(assignment), { timeoutMs: ASSIGN_TIMEOUT_MS })
      const answer = AssignmentAnswer.parse(JSON.parse(reply.data))
      if (!answer.ok) return { ok: false, reason: 'refused', message: `${answer.code}: ${answer.message}` }
      return { ok: true, expiresAt: minted.expiresAt * 1000 }
    } catch (err) {
      if (err instanceof BusNoRespondersError) return { ok: false, reason: 'not-listening' }
      if (err instanceof BusTimeoutError)
        return { ok: false, reason: 'timeout', message: `pod ${pod} did not answer its assignment within ${ASSIGN_TIMEOUT_MS} ms` }
      return { ok: false, reason: 'refused', message: `bad answer from pod ${pod}: ${(err as Error).message}` }
    }
  }
}
