import type { V1Lease } from '@kubernetes/client-node'
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1'
import { describe, expect, test } from 'vitest'
import { buildLease, decideLease } from '../../controller/lease.ts'

const T0 = 1_700_000_000_000
const lease = (holder: string, version = '7', seconds = 15): V1Lease => ({
  metadata: { name: 'l', resourceVersion: version },
  spec: { holderIdentity: holder, leaseDurationSeconds: seconds },
})

describe('lease - decideLease', () => {
  test.each([
    ['no lease: create it', undefined, undefined, T0, { action: 'create' }],
    ['our own lease: renew', lease('me'), undefined, T0, { action: 'renew' }],
    ['a released lease (no holder): take it', lease(''), undefined, T0, { action: 'acquire' }],
    ['another holder, first seen now: wait a whole duration from now', lease('other'), undefined, T0, { action: 'wait', until: T0 + 15_000, holder: 'other' }],
    [
      'same version seen 10 s ago: still wait',
      lease('other'),
      { version: '7', seenAt: T0 - 10_000 },
      T0,
      { action: 'wait', until: T0 + 5_000, holder: 'other' },
    ],
    ['same version seen a duration ago: the holder is dead, take it', lease('other'), { version: '7', seenAt: T0 - 15_000 }, T0, { action: 'acquire' }],
    [
      'a new version (the holder renewed): the wait starts again',
      lease('other', '8'),
      { version: '7', seenAt: T0 - 60_000 },
      T0,
      { action: 'wait', until: T0 + 15_000, holder: 'other' },
    ],
    ["the lease's own duration wins over ours", lease('other', '7', 2), { version: '7', seenAt: T0 - 2_000 }, T0, { action: 'acquire' }],
  ])('%s', (_name, current, observed, now, expected) => {
    expect(decideLease({ lease: current, identity: 'me', now, observed, durationMs: 15_000 })).toEqual(expected)
  })
})

describe('lease - buildLease', () => {
  test('a new lease is a valid coordination.k8s.io/v1 Lease held by us', () => {
    const built = JSON.parse(JSON.stringify(buildLease({ name: 'agent-runtime-controller', namespace: 'ns', identity: 'c-0', durationMs: 15_000, now: T0 })))
    new Lease(built).validate()
    expect(built.apiVersion).toBe('coordination.k8s.io/v1')
    expect(built.kind).toBe('Lease')
    expect(built.spec.holderIdentity).toBe('c-0')
    expect(built.spec.leaseDurationSeconds).toBe(15)
    expect(built.spec.leaseTransitions).toBe(0)
    // MicroTime: RFC 3339 with microseconds, as the API server wants.
    expect(built.spec.renewTime).toBe('2023-11-14T22:13:20.000000Z')
    expect(built.spec.acquireTime).toBe(built.spec.renewTime)
    expect(built.metadata.resourceVersion).toBeUndefined()
  })

  test('taking over counts a transition and keeps the version read; renewing keeps acquireTime', () => {
    const previous: V1Lease = {
      metadata: { name: 'l', resourceVersion: '9' },
      spec: { holderIdentity: 'old', leaseTransitions: 3, acquireTime: new Date(T0 - 99_000) as never },
    }
    const taken = JSON.parse(JSON.stringify(buildLease({ name: 'l', namespace: 'ns', identity: 'me', durationMs: 15_000, now: T0, previous })))
    expect(taken.spec.leaseTransitions).toBe(4)
    expect(taken.metadata.resourceVersion).toBe('9')
    expect(taken.spec.acquireTime).toBe(taken.spec.renewTime)
    const mine: V1Lease = {
      metadata: { name: 'l', resourceVersion: '10' },
      spec: { holderIdentity: 'me', leaseTransitions: 4, acquireTime: new Date(T0 - 5_000) as never },
    }
    const renewed = JSON.parse(JSON.stringify(buildLease({ name: 'l', namespace: 'ns', identity: 'me', durationMs: 15_000, now: T0, previous: mine })))
    expect(renewed.spec.leaseTransitions).toBe(4)
    expect(renewed.spec.acquireTime).toBe('2023-11-14T22:13:15.000000Z')
    new Lease(renewed).validate()
  })
})
