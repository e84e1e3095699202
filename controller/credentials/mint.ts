/**
 * Per-session NATS credentials: the controller mints, for the sandbox pod that
 * serves one session, a user whose permissions reach that session only
 * (contract/permissions.ts, role `session-runner`).
 */
import { createUser, type KeyPair } from '@nats-io/nkeys'
import { inboxPrefixFor, permissionsFor, type NatsPermissions } from '../../contract/permissions.ts'
import { encodeUserJwt, formatCreds } from './jwt.ts'

export interface SessionCredentials {
  /** The `.creds` file's text (user JWT + seed): a secret. */
  creds: string
  /** The user's public key, for logs and revocation. */
  user: string
  /** The inbox prefix the pod must connect with (its `NATS_INBOX_PREFIX`). */
  inboxPrefix: string
  permissions: NatsPermissions
  /** Seconds since the epoch. */
  expiresAt: number
}

export interface MinterOptions {
  /** The account key, or one of its signing keys, that the server trusts. */
  signer: KeyPair
  /** The account's public key when `signer` is a signing key (the JWT then names it as `issuer_account`). */
  account?: string | undefined
  prefix: string
  /** How long a credential is valid; a pod that lives longer needs a new one. */
  ttlMs: number
  now?: () => number
}

/** Mints session credentials; one per (session, pod), never shared. */
export class SessionCredentialMinter {
  readonly #options: MinterOptions

  constructor(options: MinterOptions) {
    if (!(options.ttlMs > 0)) throw new Error('session credentials need a positive lifetime')
    this.#options = options
  }

  /** A fresh user (new key pair) for `runnerId` (the pod's name) serving `sessionId`. */
  mint(sessionId: string, runnerId: string): SessionCredentials {
    const { signer, account, prefix, ttlMs } = this.#options
    const now = (this.#options.now ?? Date.now)()
    const spec = { role: 'session-runner' as const, prefix, sessionId, runnerId }
    const permissions = permissionsFor(spec)
    const user: KeyPair = createUser()
    const issuedAt = Math.floor(now / 1000)
    const expiresAt = Math.ceil((now + ttlMs) / 1000)
    const signerKey = signer.getPublicKey()
    const jwt = encodeUserJwt(signer, {
      subject: user.getPublicKey(),
      name: `session-runner ${runnerId}`,
      permissions,
      ...(account !== undefined && account !== signerKey && { issuerAccount: account }),
      issuedAt,
      expiresAt,
    })
    return { creds: formatCreds(jwt, user.getSeed()), user: user.getPublicKey(), inboxPrefix: inboxPrefixFor(spec), permissions, expiresAt }
  }
}
