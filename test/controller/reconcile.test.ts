import { describe, expect, test } from 'vitest'
import { planReconcile } from '../../controller/reconcile/plan.ts'
import { ownerIndex, type Action, type DeleteReason, type PodView, type World } from '../../controller/reconcile/view.ts'
import type { DesiredSession } from '../../controller/sessions.ts'

const NOW = 10_000_000
const READY = 60_000
const IDLE = 300_000
const CLAIM = 30_000

let n = 0
const name = () =>
  `pool-${String(++n)
    .padStart(10, 'a')
    .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)]!)}`

function pod(over: Partial<PodView> & { name: string }): PodView {
  return {
    resourceVersion: '1',
    state: 'warm',
    sessionId: undefined,
    demandFor: undefined,
    createdAt: NOW - 1_000,
    assignedAt: undefined,
    deleting: false,
    finished: undefined,
    ready: true,
    readySince: NOW - 500,
    changing: false,
    ...over,
  }
}

function world(
  over: {
    pods?: PodView[]
    sessions?: DesiredSession[]
    inflight?: World['inflight']
    demands?: string[]
    deletedByUs?: [string, DeleteReason][]
    warmPool?: number
    maxPods?: number
    placesSessions?: boolean
    unplaceable?: string[]
  } = {},
): World {
  const sessions = over.sessions ?? []
  return {
    now: NOW,
    pool: 'pool',
    limits: { warmPool: over.warmPool ?? 2, maxPods: over.maxPods ?? 10, readyTimeoutMs: READY, idleTimeoutMs: IDLE, claimTimeoutMs: CLAIM },
    pods: over.pods ?? [],
    inflight: over.inflight ?? [],
    sessions: new Map(sessions.map((s) => [s.session_id, s])),
    owners: ownerIndex(sessions),
    demands: over.demands ?? [],
    deletedByUs: new Map(over.deletedByUs ?? []),
    placesSessions: over.placesSessions ?? false,
    unplaceable: new Set(over.unplaceable ?? []),
  }
}

/** Order-free comparison that allows asymmetric matchers. */
const same = (actions: Action[], expected: unknown[]) => {
  expect(actions).toHaveLength(expected.length)
  expect(actions).toEqual(expect.arrayContaining(expected))
}
const sorted = (actions: Action[]) => [...actions].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
const plan = (w: World) => sorted(planReconcile(w).actions)
const createWarm: Action = { kind: 'create', purpose: { kind: 'warm' } }

describe('reconcile - warm pool', () => {
  test('an empty pool is filled', () => {
    expect(plan(world())).toEqual([createWarm, createWarm])
  })
  test('a full pool asks for nothing; pods on their way count', () => {
    const a = name()
    expect(plan(world({ pods: [pod({ name: a })], inflight: [{ name: name(), purpose: { kind: 'warm' } }] }))).toEqual([])
  })
  test('a starting pod within its ready timeout counts as warm', () => {
    expect(plan(world({ pods: [pod({ name: name(), ready: false, readySince: undefined }), pod({ name: name() })] }))).toEqual([])
  })
  test('max_pods caps creation', () => {
    const assigned = [1, 2].map((i) => pod({ name: `pool-assigned${i}x`, state: 'assigned', sessionId: `s${i}` }))
    const sessions = [1, 2].map((i): DesiredSession => ({ session_id: `s${i}`, owner: `pool-assigned${i}x`, state: 'busy', last_active: NOW }))
    expect(plan(world({ pods: assigned, sessions, maxPods: 3, warmPool: 2 }))).toEqual([createWarm])
  })
  test('surplus warm pods are trimmed, not-ready first, then the newest', () => {
    const old = pod({ name: 'pool-oldoldoldo', createdAt: NOW - 9_000 })
    const young = pod({ name: 'pool-youngyoung', createdAt: NOW - 2_000 })
    const starting = pod({ name: 'pool-startingxx', ready: false, readySince: undefined, createdAt: NOW - 1_000 })
    expect(plan(world({ pods: [old, young, starting], warmPool: 1 }))).toEqual(
      sorted([
        { kind: 'delete', pod: 'pool-startingxx', reason: 'Surplus', message: 'the warm pool holds 1' },
        { kind: 'delete', pod: 'pool-youngyoung', reason: 'Surplus', message: 'the warm pool holds 1' },
      ]),
    )
  })
  test('a pod whose label change is on its way is left alone and not counted', () => {
    expect(plan(world({ pods: [pod({ name: name(), changing: true }), pod({ name: name() })] }))).toEqual([createWarm])
  })
})

describe('reconcile - assignments', () => {
  test('a warm pod whose runner claimed a session is labelled, and the pool refills in the same pass', () => {
    const a = pod({ name: 'pool-claimedxxx', resourceVersion: '42' })
    const b = pod({ name: 'pool-waitingxxx' })
    const sessions: DesiredSession[] = [{ session_id: 's1', owner: 'pool-claimedxxx', state: 'busy', last_active: NOW }]
    expect(plan(world({ pods: [a, b], sessions }))).toEqual(
      sorted([{ kind: 'assign', pod: 'pool-claimedxxx', resourceVersion: '42', sessionId: 's1' }, createWarm]),
    )
  })
  test.each<[string, DesiredSession | undefined, DeleteReason]>([
    ['closed', { session_id: 's1', owner: 'pool-assignedxx', state: 'closed', last_active: NOW }, 'SessionClosed'],
    ['gone from the registry (orphan)', undefined, 'SessionGone'],
    ['owned by another runner', { session_id: 's1', owner: 'pool-elsewhere1', state: 'idle', last_active: NOW }, 'SessionMoved'],
    ['without owner', { session_id: 's1', state: 'idle', last_active: NOW }, 'SessionMoved'],
  ])('an assigned pod whose session is %s is deleted', (_name, session, reason) => {
    const assigned = pod({ name: 'pool-assignedxx', state: 'assigned', sessionId: 's1' })
    const warm = [pod({ name: 'pool-warmwarmw1' }), pod({ name: 'pool-warmwarmw2' })]
    const actions = plan(world({ pods: [assigned, ...warm], sessions: session ? [session] : [] }))
    // (A session owned by a pod that does not exist also gets its owner released: the lost-pod duty.)
    expect(actions.filter((a) => a.kind !== 'release')).toEqual([expect.objectContaining({ kind: 'delete', pod: 'pool-assignedxx', reason })])
  })
  test('an idle session past session_idle_timeout loses its pod and its owner', () => {
    const assigned = pod({ name: 'pool-assignedxx', state: 'assigned', sessionId: 's1', assignedAt: NOW - IDLE - 5 })
    const session: DesiredSession = { session_id: 's1', owner: 'pool-assignedxx', state: 'idle', last_active: NOW - IDLE - 10 }
    const actions = plan(world({ pods: [assigned, pod({ name: 'pool-warmwarmw1' }), pod({ name: 'pool-warmwarmw2' })], sessions: [session] }))
    same(actions, [
      expect.objectContaining({ kind: 'delete', pod: 'pool-assignedxx', reason: 'IdleTimeout' }),
      { kind: 'release', sessionId: 's1', pod: 'pool-assignedxx' },
    ])
  })
  test('an idle session within the timeout asks for a look at its deadline; a busy one for nothing', () => {
    const assigned = pod({ name: 'pool-assignedxx', state: 'assigned', sessionId: 's1', assignedAt: NOW - 1_000 })
    const idle: DesiredSession = { session_id: 's1', owner: 'pool-assignedxx', state: 'idle', last_active: NOW - 2_000 }
    const warm = [pod({ name: 'pool-warmwarmw1' }), pod({ name: 'pool-warmwarmw2' })]
    const result = planReconcile(world({ pods: [assigned, ...warm], sessions: [idle] }))
    expect(result.actions).toEqual([])
    expect(result.wakeAt).toContain(NOW - 1_000 + IDLE)
    const busy = planReconcile(world({ pods: [assigned, ...warm], sessions: [{ ...idle, state: 'busy', last_active: NOW - 10 * IDLE }] }))
    expect(busy).toEqual({ actions: [], wakeAt: [] })
  })
  test('a runner whose session closed before it was labelled loses its pod', () => {
    const a = pod({ name: 'pool-claimedxxx' })
    const sessions: DesiredSession[] = [{ session_id: 's1', owner: 'pool-claimedxxx', state: 'closed', last_active: NOW }]
    same(plan(world({ pods: [a, pod({ name: 'pool-warmwarmw1' })], sessions })), [
      expect.objectContaining({ kind: 'delete', pod: 'pool-claimedxxx', reason: 'SessionClosed' }),
      createWarm,
    ])
  })
})

describe('reconcile - readiness', () => {
  test('a warm pod not ready in time is replaced', () => {
    const stuck = pod({ name: 'pool-stuckstuck', ready: false, readySince: undefined, createdAt: NOW - READY })
    expect(plan(world({ pods: [stuck, pod({ name: 'pool-warmwarmw1' })] }))).toEqual(
      sorted([{ kind: 'delete', pod: 'pool-stuckstuck', reason: 'NotReady', message: 'not ready after 60 s' }, createWarm]),
    )
  })
  test('a cold pod not ready in time fails the session waiting for it', () => {
    const stuck = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's9', ready: false, readySince: undefined, createdAt: NOW - READY - 1 })
    const actions = plan(world({ pods: [stuck], warmPool: 0 }))
    expect(actions).toEqual(
      sorted([
        { kind: 'delete', pod: 'pool-coldcoldco', reason: 'NotReady', message: 'not ready after 60 s' },
        {
          kind: 'fail',
          sessionId: 's9',
          pod: 'pool-coldcoldco',
          code: 'SANDBOX_NOT_READY',
          message: 'the sandbox pod pool-coldcoldco was not ready after 60 s',
        },
      ]),
    )
  })
  test('no failure when another runner took the session meanwhile', () => {
    const stuck = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's9', ready: false, readySince: undefined, createdAt: NOW - READY - 1 })
    const sessions: DesiredSession[] = [{ session_id: 's9', owner: 'pool-otherother', state: 'busy', last_active: NOW }]
    const actions = plan(world({ pods: [stuck, pod({ name: 'pool-otherother', state: 'assigned', sessionId: 's9' })], sessions, warmPool: 0 }))
    expect(actions).toEqual([expect.objectContaining({ kind: 'delete', pod: 'pool-coldcoldco', reason: 'NotReady' })])
  })
})

describe('reconcile - lost pods', () => {
  const assigned = (over: Partial<PodView> = {}) => pod({ name: 'pool-assignedxx', state: 'assigned', sessionId: 's1', ...over })
  const warm = [pod({ name: 'pool-warmwarmw1' }), pod({ name: 'pool-warmwarmw2' })]
  const busy: DesiredSession = { session_id: 's1', owner: 'pool-assignedxx', state: 'busy', last_active: NOW }
  test('an evicted pod mid-turn: the session gets SANDBOX_LOST, its owner is released, the pod is cleaned up', () => {
    const actions = plan(world({ pods: [assigned({ finished: { phase: 'Failed', reason: 'Evicted' } }), ...warm], sessions: [busy] }))
    expect(actions).toEqual(
      sorted([
        { kind: 'delete', pod: 'pool-assignedxx', reason: 'PodFinished', message: 'pod Evicted' },
        {
          kind: 'fail',
          sessionId: 's1',
          pod: 'pool-assignedxx',
          code: 'SANDBOX_LOST',
          message: 'the sandbox pod pool-assignedxx ended (Evicted); the next execute starts on a new sandbox',
        },
        { kind: 'release', sessionId: 's1', pod: 'pool-assignedxx' },
      ]),
    )
  })
  test('an evicted pod between turns: released, no error', () => {
    const actions = plan(world({ pods: [assigned({ finished: { phase: 'Failed', reason: 'Evicted' } }), ...warm], sessions: [{ ...busy, state: 'idle' }] }))
    expect(actions.map((a) => a.kind)).toEqual(['delete', 'release'])
  })
  test('a pod deleted by someone else (eviction API, drain) mid-turn fails the session; no second delete', () => {
    const actions = plan(world({ pods: [assigned({ deleting: true }), ...warm], sessions: [busy] }))
    expect(actions.map((a) => a.kind)).toEqual(['fail', 'release'])
  })
  test('a pod this controller deleted for its session is no loss', () => {
    expect(
      plan(world({ pods: [assigned({ deleting: true }), ...warm], sessions: [{ ...busy, state: 'idle' }], deletedByUs: [['pool-assignedxx', 'IdleTimeout']] })),
    ).toEqual([])
  })
  test('a trimmed warm pod that had just been claimed is a loss', () => {
    const claimed = pod({ name: 'pool-trimmedxxx', deleting: true })
    const sessions: DesiredSession[] = [{ session_id: 's2', owner: 'pool-trimmedxxx', state: 'busy', last_active: NOW }]
    const actions = plan(world({ pods: [claimed, ...warm], sessions, deletedByUs: [['pool-trimmedxxx', 'Surplus']] }))
    expect(actions.map((a) => a.kind)).toEqual(['fail', 'release'])
  })
  test('a session whose pod vanished is released (and failed mid-turn); owners that are not pool pods are left alone', () => {
    const sessions: DesiredSession[] = [
      { session_id: 's1', owner: 'pool-vanishedxx', state: 'busy', last_active: NOW },
      { session_id: 's2', owner: 'laptop-4242', state: 'busy', last_active: NOW },
      { session_id: 's3', owner: 'pool-goneidlexx', state: 'idle', last_active: NOW },
    ]
    const actions = plan(world({ pods: warm, sessions }))
    expect(actions).toEqual(
      sorted([
        {
          kind: 'fail',
          sessionId: 's1',
          pod: 'pool-vanishedxx',
          code: 'SANDBOX_LOST',
          message: 'the sandbox pod pool-vanishedxx is gone; the next execute starts on a new sandbox',
        },
        { kind: 'release', sessionId: 's1', pod: 'pool-vanishedxx' },
        { kind: 'release', sessionId: 's3', pod: 'pool-goneidlexx' },
      ]),
    )
  })
  test('a pod just created and not yet seen is not gone', () => {
    const sessions: DesiredSession[] = [{ session_id: 's1', owner: 'pool-newnewnewn', state: 'busy', last_active: NOW }]
    expect(plan(world({ pods: warm, sessions, inflight: [{ name: 'pool-newnewnewn', purpose: { kind: 'warm' } }] }))).toEqual([])
  })
})

describe('reconcile - demand', () => {
  test('a demand with no pod gets a cold pod of its own, beside the warm pool', () => {
    expect(plan(world({ demands: ['s1'], warmPool: 0 }))).toEqual([{ kind: 'create', purpose: { kind: 'cold', sessionId: 's1' } }])
  })
  test('a demand answered by the pod already made for it, or by its owner', () => {
    const cold = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's1', ready: false })
    expect(plan(world({ pods: [cold], demands: ['s1'], warmPool: 0 }))).toEqual([
      { kind: 'answer', sessionId: 's1', answer: { ok: true, pod: 'pool-coldcoldco', created: false } },
    ])
    const sessions: DesiredSession[] = [{ session_id: 's2', owner: 'pool-ownerowner', state: 'busy', last_active: NOW }]
    const owner = pod({ name: 'pool-ownerowner', state: 'assigned', sessionId: 's2' })
    expect(plan(world({ pods: [owner], sessions, demands: ['s2'], warmPool: 0 }))).toEqual([
      { kind: 'answer', sessionId: 's2', answer: { ok: true, pod: 'pool-ownerowner', created: false } },
    ])
  })
  test('at max_pods a demand is refused; demand goes before the warm pool', () => {
    const full = plan(world({ pods: [pod({ name: name() })], demands: ['s1'], maxPods: 1, warmPool: 1 }))
    expect(full).toEqual([
      { kind: 'answer', sessionId: 's1', answer: { ok: false, code: 'POOL_EXHAUSTED', message: 'controller.max_pods (1) sandbox pods exist' } },
    ])
    const one = plan(world({ demands: ['s1'], maxPods: 1, warmPool: 1 }))
    expect(one).toEqual([{ kind: 'create', purpose: { kind: 'cold', sessionId: 's1' } }])
  })
  test('a cold pod nobody claimed within claim_timeout of being ready becomes warm', () => {
    const cold = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's1', readySince: NOW - CLAIM, resourceVersion: '5' })
    expect(plan(world({ pods: [cold], warmPool: 0 }))).toEqual([{ kind: 'warm', pod: 'pool-coldcoldco', resourceVersion: '5' }])
    const young = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's1', readySince: NOW - 10 })
    const result = planReconcile(world({ pods: [young], warmPool: 0 }))
    expect(result.actions).toEqual([])
    expect(result.wakeAt).toEqual([NOW - 10 + CLAIM])
  })
  test('a cold pod whose session another runner took becomes warm at once', () => {
    const cold = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's1', readySince: NOW, resourceVersion: '5' })
    const sessions: DesiredSession[] = [{ session_id: 's1', owner: 'pool-elsewhere1', state: 'busy', last_active: NOW }]
    const other = pod({ name: 'pool-elsewhere1', state: 'assigned', sessionId: 's1' })
    expect(plan(world({ pods: [cold, other], sessions, warmPool: 0 }))).toEqual([{ kind: 'warm', pod: 'pool-coldcoldco', resourceVersion: '5' }])
  })
})

describe('reconcile - placement by the controller (per-session credentials)', () => {
  const placing = (extra: Parameters<typeof world>[0]) => plan(world({ placesSessions: true, ...extra }))
  test('a demand is placed on a ready warm pod; one pod per session; the pool refills in the same pass', () => {
    const a = pod({ name: 'pool-warmwarmaa', resourceVersion: '3' })
    const b = pod({ name: 'pool-warmwarmbb', resourceVersion: '4', createdAt: NOW - 500 })
    same(placing({ pods: [a, b], demands: ['s1', 's2'], warmPool: 2 }), [
      { kind: 'place', pod: 'pool-warmwarmaa', resourceVersion: '3', sessionId: 's1' },
      { kind: 'place', pod: 'pool-warmwarmbb', resourceVersion: '4', sessionId: 's2' },
    ])
  })
  test.each<[string, PodView]>([
    ['not ready yet', pod({ name: 'pool-warmwarmaa', ready: false })],
    ['being deleted', pod({ name: 'pool-warmwarmaa', deleting: true })],
    ['assigned to another session', pod({ name: 'pool-warmwarmaa', state: 'assigned', sessionId: 'other' })],
    ['its label change on its way', pod({ name: 'pool-warmwarmaa', changing: true })],
  ])('no placement on a pod %s: a cold pod is made for the session, and no answer yet', (_why, unusable) => {
    const actions = placing({ pods: [unusable], demands: ['s1'], warmPool: 0 })
    expect(actions.filter((a) => a.kind === 'place' || a.kind === 'answer')).toEqual([])
    expect(actions).toContainEqual({ kind: 'create', purpose: { kind: 'cold', sessionId: 's1' } })
  })
  test('a pod being placed or whose runner did not listen a moment ago is passed over', () => {
    const a = pod({ name: 'pool-warmwarmaa' })
    const b = pod({ name: 'pool-warmwarmbb' })
    expect(placing({ pods: [a, b], demands: ['s1'], unplaceable: ['pool-warmwarmaa'], warmPool: 0 }).filter((x) => x.kind === 'place')).toEqual([
      { kind: 'place', pod: 'pool-warmwarmbb', resourceVersion: '1', sessionId: 's1' },
    ])
  })
  test('the cold pod made for a session goes to it, before any warm pod; until it is ready the demand waits unanswered', () => {
    const warm = pod({ name: 'pool-warmwarmaa' })
    const cold = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's1', resourceVersion: '7' })
    expect(placing({ pods: [warm, cold], demands: ['s1'], warmPool: 1 })).toEqual([
      { kind: 'place', pod: 'pool-coldcoldco', resourceVersion: '7', sessionId: 's1' },
    ])
    const starting = pod({ name: 'pool-coldcoldco', state: 'cold', demandFor: 's1', ready: false })
    expect(placing({ pods: [starting], demands: ['s1'], warmPool: 0 })).toEqual([])
  })
  test('a session whose runner lives is answered with its pod (assigned); one whose pod is gone waits for the release', () => {
    const sessions: DesiredSession[] = [{ session_id: 's2', owner: 'pool-ownerowner', state: 'idle', last_active: NOW }]
    const owner = pod({ name: 'pool-ownerowner', state: 'assigned', sessionId: 's2' })
    expect(placing({ pods: [owner], sessions, demands: ['s2'], warmPool: 0 })).toEqual([
      { kind: 'answer', sessionId: 's2', answer: { ok: true, pod: 'pool-ownerowner', created: false, assigned: true } },
    ])
    const warm = pod({ name: 'pool-warmwarmaa' })
    expect(placing({ pods: [warm], sessions, demands: ['s2'], warmPool: 1 })).toEqual([{ kind: 'release', sessionId: 's2', pod: 'pool-ownerowner' }])
  })
  test('a placed pod is kept while its runner has not recorded the session yet, within claim_timeout of the assignment; then it is an orphan', () => {
    const placed = (assignedAt: number) => pod({ name: 'pool-placedpodd', state: 'assigned', sessionId: 's1', assignedAt })
    const waiting = planReconcile(world({ placesSessions: true, pods: [placed(NOW - 10)], warmPool: 0 }))
    expect(waiting.actions).toEqual([])
    expect(waiting.wakeAt).toContain(NOW - 10 + CLAIM)
    const released = [{ session_id: 's1', state: 'idle' as const, last_active: NOW - 5 }]
    expect(planReconcile(world({ placesSessions: true, pods: [placed(NOW - 10)], sessions: released, warmPool: 0 })).actions).toEqual([])
    expect(placing({ pods: [placed(NOW - CLAIM)], warmPool: 0 })).toEqual([
      { kind: 'delete', pod: 'pool-placedpodd', reason: 'SessionGone', message: expect.any(String) },
    ])
    // Without controller placement nothing changes: a labelled pod whose session is gone goes at once.
    expect(plan(world({ pods: [placed(NOW - 10)], warmPool: 0 }))).toEqual([
      { kind: 'delete', pod: 'pool-placedpodd', reason: 'SessionGone', message: expect.any(String) },
    ])
  })
})

describe('reconcile - plan', () => {
  test('idempotent: the world after the actions asks for nothing more', () => {
    const w1 = world({ demands: ['s1'] })
    const first = planReconcile(w1).actions
    expect(first.filter((a) => a.kind === 'create')).toHaveLength(3)
    const made = first
      .map((a, i) =>
        a.kind === 'create'
          ? pod({
              name: `pool-made${i}xxxxx`,
              state: a.purpose.kind === 'cold' ? 'cold' : 'warm',
              demandFor: a.purpose.kind === 'cold' ? a.purpose.sessionId : undefined,
            })
          : undefined,
      )
      .filter((p) => p !== undefined)
    expect(plan(world({ pods: made }))).toEqual([])
  })
  test('each pod is deleted once even when two duties want it gone', () => {
    const p = pod({ name: 'pool-twicetwice', state: 'assigned', sessionId: 's1', finished: { phase: 'Failed', reason: 'Error' } })
    const deletes = planReconcile(world({ pods: [p], warmPool: 0 })).actions.filter((a) => a.kind === 'delete')
    expect(deletes).toHaveLength(1)
  })
})
