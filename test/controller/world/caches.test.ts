import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, test } from 'vitest'
import { INFLIGHT_TTL_MS, REPORTED_TTL_MS, WorldCaches } from '../../../controller/world/caches.ts'

const T0 = 1_000_000
const RESYNC = 30_000

const pod = (name: string, resourceVersion = '1'): V1Pod => ({ metadata: { name, resourceVersion }, status: { phase: 'Running' } })

/** What a look at the pods shows of the caches. */
function shown(caches: WorldCaches, pods: V1Pod[], now: number) {
  const seen = caches.look(pods, now, RESYNC)
  return {
    inflight: seen.inflight.map((p) => p.name),
    changing: seen.pods.filter((p) => p.changing).map((p) => p.name),
    deleting: seen.pods.filter((p) => p.deleting).map((p) => p.name),
    deletedByUs: [...seen.deletedByUs.keys()],
    unplaceable: [...seen.unplaceable],
  }
}

const nothing = { inflight: [], changing: [], deleting: [], deletedByUs: [], unplaceable: [] }

interface Row {
  name: string
  /** What the controller did, at T0. */
  record: (caches: WorldCaches) => void
  /** Earlier looks, in order: the pods listed and when. */
  before?: { pods: V1Pod[]; now: number }[]
  pods: V1Pod[]
  now: number
  shows: Partial<ReturnType<typeof shown>>
}

const rows: Row[] = [
  {
    name: 'a created pod is on its way until it is listed',
    record: (c) => c.created('p1', { kind: 'warm' }, T0),
    pods: [],
    now: T0 + 1_000,
    shows: { inflight: ['p1'] },
  },
  {
    name: 'a created pod that is listed is no longer on its way',
    record: (c) => c.created('p1', { kind: 'warm' }, T0),
    pods: [pod('p1')],
    now: T0 + 1_000,
    shows: { inflight: [] },
  },
  {
    name: 'a created pod is still on its way after exactly INFLIGHT_TTL_MS',
    record: (c) => c.created('p1', { kind: 'warm' }, T0),
    pods: [],
    now: T0 + INFLIGHT_TTL_MS,
    shows: { inflight: ['p1'] },
  },
  {
    name: 'a created pod never listed is forgotten after INFLIGHT_TTL_MS',
    record: (c) => c.created('p1', { kind: 'warm' }, T0),
    pods: [],
    now: T0 + INFLIGHT_TTL_MS + 1,
    shows: { inflight: [] },
  },
  {
    name: 'a pod the watch showed is no longer on its way',
    record: (c) => {
      c.created('p1', { kind: 'cold', sessionId: 's1' }, T0)
      c.seen('p1')
    },
    pods: [],
    now: T0,
    shows: { inflight: [] },
  },
  { name: 'a creation taken back is forgotten', record: (c) => c.created('p1', { kind: 'warm' }, T0)(), pods: [], now: T0, shows: { inflight: [] } },
  {
    name: 'a pod being changed is left alone while at the version the change was made against',
    record: (c) => c.changing('p1', '7'),
    pods: [pod('p1', '7'), pod('p2')],
    now: T0,
    shows: { changing: ['p1'] },
  },
  {
    name: 'a pod being changed is seen as changed once its version moves on',
    record: (c) => c.changing('p1', '7'),
    pods: [pod('p1', '8')],
    now: T0,
    shows: { changing: [] },
  },
  {
    name: 'a change is forgotten once the pod is not listed',
    record: (c) => c.changing('p1', '7'),
    before: [{ pods: [], now: T0 }],
    pods: [pod('p1', '7')],
    now: T0,
    shows: { changing: [] },
  },
  { name: 'a change taken back is forgotten', record: (c) => c.changing('p1', '7')(), pods: [pod('p1', '7')], now: T0, shows: { changing: [] } },
  {
    name: 'a pod deleted by us counts as being deleted',
    record: (c) => c.deleting('p1', 'Surplus', T0),
    pods: [pod('p1')],
    now: T0 + RESYNC - 1,
    shows: { deleting: ['p1'], deletedByUs: ['p1'] },
  },
  {
    name: 'a pod that outlived our delete by a resync is deleted again',
    record: (c) => c.deleting('p1', 'Surplus', T0),
    pods: [pod('p1')],
    now: T0 + RESYNC,
    shows: { deleting: [], deletedByUs: ['p1'] },
  },
  {
    name: 'a delete is forgotten once the pod is not listed',
    record: (c) => c.deleting('p1', 'Surplus', T0),
    before: [{ pods: [], now: T0 }],
    pods: [pod('p1')],
    now: T0,
    shows: { deleting: [], deletedByUs: [] },
  },
  {
    name: 'a delete taken back is forgotten',
    record: (c) => c.deleting('p1', 'IdleTimeout', T0)(),
    pods: [pod('p1')],
    now: T0,
    shows: { deleting: [], deletedByUs: [] },
  },
  { name: 'a pod being placed is not placed on again', record: (c) => c.placing('p1'), pods: [pod('p1')], now: T0, shows: { unplaceable: ['p1'] } },
  { name: 'a pod done being placed may be placed on again', record: (c) => c.placing('p1')(), pods: [pod('p1')], now: T0, shows: { unplaceable: [] } },
  {
    name: 'a pod not listening is passed over until then',
    record: (c) => c.notListening('p1', T0 + 500),
    pods: [pod('p1')],
    now: T0 + 499,
    shows: { unplaceable: ['p1'] },
  },
  {
    name: 'a pod not listening may be placed on from then',
    record: (c) => c.notListening('p1', T0 + 500),
    pods: [pod('p1')],
    now: T0 + 500,
    shows: { unplaceable: [] },
  },
  {
    name: 'a pod not listening stays passed over though it is not listed',
    record: (c) => c.notListening('p1', T0 + 500),
    pods: [],
    now: T0,
    shows: { unplaceable: ['p1'] },
  },
  {
    name: 'a new leader forgets creations and changes, keeps deletes',
    record: (c) => {
      c.created('p1', { kind: 'warm' }, T0)
      c.changing('p2', '1')
      c.deleting('p3', 'Surplus', T0)
      c.forgetLeadership()
    },
    pods: [pod('p2'), pod('p3')],
    now: T0,
    shows: { inflight: [], changing: [], deleting: ['p3'], deletedByUs: ['p3'] },
  },
]

describe('world caches - what the pod cache may not show yet', () => {
  test.each(rows)('world caches - $name', ({ record, before, pods, now, shows }) => {
    const caches = new WorldCaches()
    record(caches)
    for (const look of before ?? []) caches.look(look.pods, look.now, RESYNC)
    expect(shown(caches, pods, now)).toEqual({ ...nothing, ...shows })
  })

  test('world caches - a created pod keeps its purpose', () => {
    const caches = new WorldCaches()
    caches.created('p1', { kind: 'cold', sessionId: 's1' }, T0)
    expect(caches.look([], T0, RESYNC).inflight).toEqual([{ name: 'p1', purpose: { kind: 'cold', sessionId: 's1' } }])
  })

  test('world caches - a delete keeps its reason', () => {
    const caches = new WorldCaches()
    caches.deleting('p1', 'NotReady', T0)
    expect(caches.look([pod('p1')], T0, RESYNC).deletedByUs).toEqual(new Map([['p1', 'NotReady']]))
  })

  test('world caches - isPlacing follows placing and its end', () => {
    const caches = new WorldCaches()
    const done = caches.placing('p1')
    expect(caches.isPlacing('p1')).toBe(true)
    done()
    expect(caches.isPlacing('p1')).toBe(false)
  })
})

describe('world caches - reports are sent once', () => {
  const cases: { name: string; steps: (c: WorldCaches) => void; now: number; again: boolean }[] = [
    { name: 'a report just sent is not sent again', steps: (c) => c.report('fail:s1:p1', T0), now: T0, again: false },
    { name: 'another report of the same session and pod is its own', steps: (c) => c.report('release:s1:p1', T0), now: T0, again: true },
    { name: 'a report taken back (its call failed) is sent again', steps: (c) => c.report('fail:s1:p1', T0)!(), now: T0, again: true },
    { name: 'a report is remembered for REPORTED_TTL_MS', steps: (c) => c.report('fail:s1:p1', T0), now: T0 + REPORTED_TTL_MS, again: false },
    { name: 'a report older than REPORTED_TTL_MS is sent again', steps: (c) => c.report('fail:s1:p1', T0), now: T0 + REPORTED_TTL_MS + 1, again: true },
  ]
  test.each(cases)('world caches - $name', ({ steps, now, again }) => {
    const caches = new WorldCaches()
    steps(caches)
    caches.look([], now, RESYNC)
    expect(caches.report('fail:s1:p1', now) !== undefined).toBe(again)
  })
})
