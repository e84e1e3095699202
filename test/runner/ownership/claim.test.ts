import { describe, expect, it } from 'vitest'
import { emptyStats } from '../../../contract/mod.ts'
import { claimSession } from '../../../runner/ownership/claim.ts'
import { MemoryRegistry, type SessionRecord } from '../../../state/mod.ts'

const fresh = (id: string) => (): SessionRecord => ({ session_id: id, state: 'idle', cli_session_id: 'u', created_at: 1, last_active: 1, stats: emptyStats() })

async function setup(owner: string | undefined, alive: string[]) {
  const registry = new MemoryRegistry()
  await registry.create({ ...fresh('s')(), ...(owner !== undefined && { owner }), state: 'busy', turn_id: 't1' })
  return { registry, isAlive: async (id: string) => alive.includes(id) }
}

describe('claimSession', () => {
  it('claim - a new session is created, owned by the claimant', async () => {
    const registry = new MemoryRegistry()
    const claim = await claimSession({ registry, isAlive: async () => true }, 'new', 'r1', fresh('new'))
    expect(claim).toMatchObject({ kind: 'claimed', record: { value: { owner: 'r1' } } })
    expect(claim).not.toHaveProperty('takenFrom')
  })

  it('claim - without a record and nothing to create it is absent', async () => {
    expect(await claimSession({ registry: new MemoryRegistry(), isAlive: async () => true }, 'x', 'r1', undefined)).toEqual({ kind: 'absent' })
  })

  it.each([
    ['a live owner keeps it', 'r2', ['r2'], { kind: 'owned', owner: 'r2' }],
    ['a dead owner loses it, and the lost record is reported', 'r2', [], { kind: 'claimed', takenFrom: { owner: 'r2', turn_id: 't1' } }],
    ['a released session is taken', undefined, [], { kind: 'claimed' }],
    ['the claimant already owns it', 'r1', [], { kind: 'claimed' }],
  ])('claim - %s', async (_name, owner, alive, expected) => {
    const deps = await setup(owner, alive)
    const claim = await claimSession(deps, 's', 'r1', undefined)
    expect(claim).toMatchObject(expected)
    if (claim.kind === 'claimed') expect((await deps.registry.get('s'))?.value.owner).toBe('r1')
  })

  it('claim - two runners racing for a dead owner: exactly one wins', async () => {
    const deps = await setup('dead', [])
    const results = await Promise.all(
      ['r1', 'r2', 'r3'].map((runner) => claimSession({ ...deps, isAlive: async (id) => id !== 'dead' }, 's', runner, undefined)),
    )
    const winners = results.filter((claim) => claim.kind === 'claimed')
    expect(winners).toHaveLength(1)
    const owner = (await deps.registry.get('s'))!.value.owner
    expect(results.filter((claim) => claim.kind === 'owned').every((claim) => claim.kind === 'owned' && claim.owner === owner)).toBe(true)
  })
})
