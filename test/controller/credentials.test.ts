/** Session credentials the controller mints: a user JWT signed by the account's signing key, limited to one session. */
import { createAccount, fromPublic } from '@nats-io/nkeys'
import { describe, expect, it } from 'vitest'
import { permissionsFor } from '../../contract/permissions.ts'
import { accountSigner, decodeJwtClaims } from '../../controller/credentials/jwt.ts'
import { SessionCredentialMinter } from '../../controller/credentials/mint.ts'

const signer = createAccount()
const account = createAccount().getPublicKey()
const NOW = 1_800_000_000_000

function mint(sessionId = 's-1', runnerId = 'pod-1') {
  return new SessionCredentialMinter({ signer, account, prefix: 'ar', ttlMs: 3_600_000, now: () => NOW }).mint(sessionId, runnerId)
}

const jwtOf = (creds: string) => /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(creds)![1]!

describe('SessionCredentialMinter', () => {
  it('credentials - the JWT carries the session runner permissions, the signing key as issuer, the account, an expiry', () => {
    const minted = mint()
    const claims = decodeJwtClaims(jwtOf(minted.creds))
    const expected = permissionsFor({ role: 'session-runner', prefix: 'ar', sessionId: 's-1', runnerId: 'pod-1' })
    expect(claims).toMatchObject({
      iss: signer.getPublicKey(),
      sub: minted.user,
      iat: NOW / 1000,
      exp: NOW / 1000 + 3600,
      nats: { type: 'user', version: 2, issuer_account: account },
    })
    expect(claims.nats.pub).toEqual({ allow: expected.publish.allow, deny: expected.publish.deny })
    expect(claims.nats.sub).toEqual({ allow: expected.subscribe.allow })
    expect(claims.nats.resp).toEqual({ max: 1, ttl: 0 })
    expect(minted.inboxPrefix).toBe(expected.inboxPrefix)
  })

  it('credentials - the signature verifies with the signer’s public key, and fails for any other', () => {
    const [header, payload, signature] = jwtOf(mint().creds).split('.') as [string, string, string]
    const data = new TextEncoder().encode(`${header}.${payload}`)
    const sig = Buffer.from(signature, 'base64url')
    expect(fromPublic(signer.getPublicKey()).verify(data, sig)).toBe(true)
    expect(fromPublic(createAccount().getPublicKey()).verify(data, sig)).toBe(false)
  })

  it('credentials - every mint is a new user with its own seed; the creds file holds the seed of that user', () => {
    const [a, b] = [mint(), mint()]
    expect(a.user).not.toBe(b.user)
    expect(a.creds).toMatch(/-----BEGIN USER NKEY SEED-----\nSU[A-Z0-9]+\n------END USER NKEY SEED------/)
    expect(a.creds).not.toBe(b.creds)
  })

  it('credentials - signed with the account key itself, no issuer_account is named', () => {
    const own = new SessionCredentialMinter({ signer, account: signer.getPublicKey(), prefix: 'ar', ttlMs: 1_000 }).mint('s', 'p')
    expect(decodeJwtClaims(jwtOf(own.creds)).nats.issuer_account).toBeUndefined()
  })

  it('credentials - a bad signing key or lifetime is refused up front', () => {
    expect(() => accountSigner('SUAAAA')).toThrow(/account seed/)
    expect(accountSigner(new TextDecoder().decode(signer.getSeed())).getPublicKey()).toBe(signer.getPublicKey())
    expect(() => new SessionCredentialMinter({ signer, prefix: 'ar', ttlMs: 0 })).toThrow(/positive lifetime/)
  })
})
