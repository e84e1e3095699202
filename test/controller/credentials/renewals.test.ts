import type { V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { describe, expect, test } from 'vitest'
import { Background } from '../../../controller/background.ts'
import type { AssignResult, SessionAssigner } from '../../../controller/credentials/assigner.ts'
import { CredentialRenewals, placedPods, RENEW_RETRY_MS } from '../../../controller/credentials/renewals.ts'
import { ANNOTATION } from '../../../controller/labels.ts'
import { ManualClock } from '../../fixtures/manual-clock.ts'

const TTL = 60_000

function placed(name: string, over: { sessionId?: string; phase?: string; deleting?: boolean } = {}): V1Pod {
  return {
    metadata: {
      name,
      annotations: over.sessionId === undefined ? {} : { [ANNOTATION.sessionId]: over.sessionId },
      ...(over.deleting && { deletionTimestamp: new Date(0) }),
    },
    status: { phase: over.phase ?? 'Running' },
  }
}

describe('placed pods', () => {
  const rows: { name: string; pod: V1Pod; session: string | undefined }[] = [
    { name: 'a running pod with a session', pod: placed('p1', { sessionId: 's1' }), session: 's1' },
    { name: 'a warm pod (no session)', pod: placed('p1'), session: undefined },
    { name: 'a pod not running yet', pod: placed('p1', { sessionId: 's1', phase: 'Pending' }), session: undefined },
    { name: 'a pod that finished', pod: placed('p1', { sessionId: 's1', phase: 'Failed' }), session: undefined },
    { name: 'a pod being deleted', pod: placed('p1', { sessionId: 's1', deleting: true }), session: undefined },
  ]
  test.each(rows)('placed pods - $name: $session', ({ pod, session }) => {
    expect(placedPods([pod]).get('p1')).toBe(session)
  })
})

function renewals() {
  const clock = new ManualClock()
  const calls: string[] = []
  const script: AssignResult[] = []
  const assigner = {
    ttlMs: TTL,
    assign: async (pod: string, sessionId: string): Promise<AssignResult> => {
      calls.push(`${pod}:${sessionId}`)
      return script.shift() ?? { ok: true, expiresAt: clock.now() + TTL }
    },
  } as unknown as SessionAssigner
  const background = new Background()
  const r = new CredentialRenewals({ assigner, clock, log: pino({ level: 'silent' }), background })
  /** Moves the clock and lets the renewals it starts end. */
  const advance = async (ms: number) => {
    clock.advance(ms)
    await new Promise((resolve) => setImmediate(resolve))
    await background.settled()
  }
  return { r, clock, calls, script, advance }
}

describe('credential renewals', () => {
  test('credential renewals - renewed after two thirds of the life, then again after two thirds of the new one', async () => {
    const t = renewals()
    t.r.renewLater('p1', 's1', t.clock.now() + TTL)
    await t.advance(TTL * (2 / 3) - 1)
    expect(t.calls).toEqual([])
    await t.advance(1)
    expect(t.calls).toEqual(['p1:s1'])
    await t.advance(TTL * (2 / 3))
    expect(t.calls).toEqual(['p1:s1', 'p1:s1'])
  })

  test('credential renewals - a failed renewal is tried again RENEW_RETRY_MS later', async () => {
    const t = renewals()
    t.script.push({ ok: false, reason: 'timeout', message: 'no answer' })
    t.r.renewLater('p1', 's1', t.clock.now())
    await t.advance(0)
    expect(t.calls).toHaveLength(1)
    await t.advance(RENEW_RETRY_MS - 1)
    expect(t.calls).toHaveLength(1)
    await t.advance(1)
    expect(t.calls).toHaveLength(2)
  })

  const follow: { name: string; renewing: [string, string][]; pods: V1Pod[]; placing?: string[]; renewedNow: string[]; kept: string[] }[] = [
    { name: 'a placed pod without a renewal is renewed now', renewing: [], pods: [placed('p1', { sessionId: 's1' })], renewedNow: ['p1:s1'], kept: ['p1:s1'] },
    { name: 'a pod being placed is left to its placement', renewing: [], pods: [placed('p1', { sessionId: 's1' })], placing: ['p1'], renewedNow: [], kept: [] },
    { name: 'a renewal of a pod gone stops', renewing: [['p1', 's1']], pods: [], renewedNow: [], kept: [] },
    {
      name: 'a renewal of a pod being deleted stops',
      renewing: [['p1', 's1']],
      pods: [placed('p1', { sessionId: 's1', deleting: true })],
      renewedNow: [],
      kept: [],
    },
    {
      name: 'a renewal of a pod now serving another session stops (and that one is renewed now)',
      renewing: [['p1', 's1']],
      pods: [placed('p1', { sessionId: 's2' })],
      renewedNow: ['p1:s2'],
      kept: ['p1:s2'],
    },
    { name: 'a renewal of a pod just placed (no session label yet) goes on', renewing: [['p1', 's1']], pods: [placed('p1')], renewedNow: [], kept: ['p1:s1'] },
  ]
  test.each(follow)('credential renewals - $name', async ({ renewing, pods, placing, renewedNow, kept }) => {
    const t = renewals()
    for (const [pod, sessionId] of renewing) t.r.renewLater(pod, sessionId, t.clock.now() + TTL)
    t.r.follow(pods, (pod) => placing?.includes(pod) ?? false)
    await t.advance(0)
    expect(t.calls).toEqual(renewedNow)
    t.calls.length = 0
    await t.advance(TTL)
    expect(t.calls).toEqual(kept)
  })

  test('credential renewals - stopAll cancels every renewal', async () => {
    const t = renewals()
    t.r.renewLater('p1', 's1', t.clock.now() + TTL)
    t.r.renewLater('p2', 's2', t.clock.now() + TTL)
    t.r.stopAll()
    await t.advance(TTL)
    expect(t.calls).toEqual([])
  })
})
