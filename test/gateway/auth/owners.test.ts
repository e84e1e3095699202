import { describe, expect, it } from 'vitest'
import type { ServiceError } from '../../../contract/mod.ts'
import { SessionOwners, type TenantClaim } from '../../../gateway/auth/owners.ts'
import { MemoryDocuments } from '../../../state/mod.ts'

const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise
    return 'ok'
  } catch (err) {
    return (err as ServiceError).code
  }
}

describe('session owners - who may use a session id', () => {
  it('session owners - without tenants nothing is checked or stored', async () => {
    const owners = new SessionOwners()
    expect(owners.enabled).toBe(false)
    expect(await codeOf(owners.admit('acme', 's1'))).toBe('ok')
    expect(await codeOf(owners.admit('globex', 's1'))).toBe('ok')
    expect(await owners.owns('globex', 's1')).toBe(true)
  })

  const cases: { name: string; existing: boolean; steps: [tenant: string, expected: string][] }[] = [
    {
      name: 'the first tenant to name an id owns it; the other gets SESSION_NOT_FOUND',
      existing: false,
      steps: [
        ['acme', 'ok'],
        ['globex', 'SESSION_NOT_FOUND'],
        ['acme', 'ok'],
      ],
    },
    {
      name: "a session that ran before tenants were configured is the tenant default's",
      existing: true,
      steps: [
        ['acme', 'SESSION_NOT_FOUND'],
        ['default', 'ok'],
        ['globex', 'SESSION_NOT_FOUND'],
      ],
    },
  ]
  for (const { name, existing, steps } of cases) {
    it(`session owners - ${name}`, async () => {
      const claims = new MemoryDocuments<TenantClaim>()
      const owners = new SessionOwners({ claims, existing: async () => existing })
      for (const [tenant, expected] of steps) expect(await codeOf(owners.admit(tenant, 's1'))).toBe(expected)
    })
  }

  it('session owners - the claim is shared: a second gateway on the same bucket answers the same, and claims never change', async () => {
    const claims = new MemoryDocuments<TenantClaim>()
    const one = new SessionOwners({ claims })
    const two = new SessionOwners({ claims })
    expect(await codeOf(one.admit('acme', 's1'))).toBe('ok')
    expect(await codeOf(two.admit('globex', 's1'))).toBe('SESSION_NOT_FOUND')
    expect(await two.owns('acme', 's1')).toBe(true)
    expect(await claims.get('s1')).toMatchObject({ tenant: 'acme' })
  })

  it('session owners - two tenants claiming one id at once: exactly one wins', async () => {
    const claims = new MemoryDocuments<TenantClaim>()
    const results = await Promise.all([new SessionOwners({ claims }).admit('acme', 's1'), new SessionOwners({ claims }).admit('globex', 's1')].map(codeOf))
    expect(results.sort()).toEqual(['SESSION_NOT_FOUND', 'ok'])
  })

  it('session owners - the refusal is the message of a missing session, naming nobody', async () => {
    const owners = new SessionOwners({ claims: new MemoryDocuments<TenantClaim>() })
    await owners.admit('acme', 's1')
    await expect(owners.admit('globex', 's1')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', message: 'Session not found: s1' })
  })
})
