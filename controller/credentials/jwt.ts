/**
 * NATS user JWTs (the v2 claim format nats-server 2.9 reads in operator mode)
 * and `.creds` files, signed with an account key from `@nats-io/nkeys`.
 */
import { createHash } from 'node:crypto'
import { fromSeed, type KeyPair } from '@nats-io/nkeys'
import type { NatsPermissions } from '../../contract/permissions.ts'

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url')
const NANOS_PER_MS = 1_000_000

export interface UserClaims {
  /** The user's public NKey (`U…`). */
  subject: string
  /** Shown by the server (`connz`) and in its logs. */
  name: string
  permissions: NatsPermissions
  /** The account's public key when `signer` is one of its signing keys, not the account key itself. */
  issuerAccount?: string | undefined
  /** Seconds since the epoch. */
  issuedAt: number
  /** Seconds since the epoch; the server refuses the user from then on. */
  expiresAt?: number | undefined
  /** How long a response permission lasts after the request arrived; none: the server's default (2 minutes). */
  responseTtlMs?: number | undefined
}

type Grants = { allow?: string[]; deny?: string[] }

/** The claims of a user JWT as they are on the wire (jti, iat, exp, iss, sub: RFC 7519; nats: the server's own). */
export interface UserJwtClaims {
  jti: string
  iat: number
  exp?: number
  iss: string
  name: string
  sub: string
  nats: {
    pub: Grants
    sub: Grants
    resp?: { max: number; ttl: number }
    subs: number
    data: number
    payload: number
    issuer_account?: string
    type: 'user'
    version: 2
  }
}

/** A user JWT for `claims`, signed by `signer` (an account key or one of its signing keys). */
export function encodeUserJwt(signer: KeyPair, claims: UserClaims): string {
  const { permissions: p } = claims
  const list = (l: { allow: string[]; deny: string[] }) => ({ ...(l.allow.length > 0 && { allow: l.allow }), ...(l.deny.length > 0 && { deny: l.deny }) })
  const nats: UserJwtClaims['nats'] = {
    pub: list(p.publish),
    sub: list(p.subscribe),
    ...(p.allowResponses && { resp: { max: 1, ttl: (claims.responseTtlMs ?? 0) * NANOS_PER_MS } }),
    subs: -1,
    data: -1,
    payload: -1,
    ...(claims.issuerAccount !== undefined && { issuer_account: claims.issuerAccount }),
    type: 'user',
    version: 2,
  }
  const body: UserJwtClaims = {
    jti: '',
    iat: claims.issuedAt,
    ...(claims.expiresAt !== undefined && { exp: claims.expiresAt }),
    iss: signer.getPublicKey(),
    name: claims.name,
    sub: claims.subject,
    nats,
  }
  // The server does not check jti; nsc makes it a hash of the claims, and so does this.
  body.jti = createHash('sha256').update(JSON.stringify(body)).digest('base64url').toUpperCase()
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))
  const payload = base64url(JSON.stringify(body))
  return `${header}.${payload}.${base64url(signer.sign(new TextEncoder().encode(`${header}.${payload}`)))}`
}

/** The claims of a JWT, unverified (for logs and tests). */
export function decodeJwtClaims(jwt: string): UserJwtClaims {
  const [, payload] = jwt.split('.')
  if (payload === undefined) throw new Error('not a JWT')
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
}

/** The text of a `.creds` file: the user JWT and the user's NKey seed (the format `nsc` writes). */
export function formatCreds(jwt: string, userSeed: Uint8Array): string {
  const seed = new TextDecoder().decode(userSeed)
  return [
    '-----BEGIN NATS USER JWT-----',
    jwt,
    '------END NATS USER JWT------',
    '',
    '************************* IMPORTANT *************************',
    'NKEY Seed printed below can be used to sign and prove identity.',
    'NKEYs are sensitive and should be treated as secrets.',
    '',
    '-----BEGIN USER NKEY SEED-----',
    seed,
    '------END USER NKEY SEED------',
    '',
  ].join('\n')
}

/** An account (signing) key pair from its seed text (`SA…`); says what is wrong otherwise. */
export function accountSigner(seed: string): KeyPair {
  const text = seed.trim()
  if (!text.startsWith('SA')) throw new Error('the NATS account signing key must be an account seed (starting SA)')
  return fromSeed(new TextEncoder().encode(text))
}
