import { describe, expect, test } from 'vitest'
import { assignmentCondition, podCondition } from '../../controller/reconcile/conditions.ts'
import type { PodView } from '../../controller/reconcile/view.ts'
import type { DesiredSession } from '../../controller/sessions.ts'

const T0 = 1_000_000
const pod = (over: Partial<PodView> = {}): PodView => ({
  name: 'p-aaaaaaaaaa',
  resourceVersion: '1',
  state: 'warm',
  sessionId: undefined,
  demandFor: undefined,
  createdAt: T0,
  assignedAt: undefined,
  deleting: false,
  finished: undefined,
  ready: false,
  readySince: undefined,
  changing: false,
  ...over,
})

describe('conditions - podCondition', () => {
  const TIMEOUT = 60_000
  test.each([
    ['a pod being deleted is Terminating, whatever else', pod({ deleting: true, ready: true }), T0, { type: 'Terminating' }],
    ['a failed pod is Finished with its reason', pod({ finished: { phase: 'Failed', reason: 'Evicted' } }), T0, { type: 'Finished', reason: 'Evicted' }],
    ['a ready pod is Ready', pod({ ready: true }), T0 + 10 * TIMEOUT, { type: 'Ready' }],
    ['a young pod is Starting until its deadline', pod(), T0 + 1_000, { type: 'Starting', deadline: T0 + TIMEOUT }],
    ['one millisecond before the deadline it still starts', pod(), T0 + TIMEOUT - 1, { type: 'Starting', deadline: T0 + TIMEOUT }],
    ['at the deadline it timed out', pod(), T0 + TIMEOUT, { type: 'ReadyTimeout', waitedMs: TIMEOUT }],
    ['long after, it timed out with the time waited', pod(), T0 + 3 * TIMEOUT, { type: 'ReadyTimeout', waitedMs: 3 * TIMEOUT }],
  ])('%s', (_name, view, now, expected) => {
    expect(podCondition(view, now, TIMEOUT)).toEqual(expected)
  })
})

describe('conditions - assignmentCondition', () => {
  const IDLE = 30_000
  const session = (over: Partial<DesiredSession> = {}): DesiredSession => ({ session_id: 's1', owner: 'p1', state: 'idle', last_active: T0, ...over })
  test.each([
    ['no record: Gone', undefined, undefined, T0, IDLE, { type: 'Gone' }],
    ['closed', session({ state: 'closed' }), undefined, T0, IDLE, { type: 'Closed' }],
    ['no owner: Released', session({ owner: undefined }), undefined, T0, IDLE, { type: 'Released' }],
    ['another owner: Moved', session({ owner: 'p2' }), undefined, T0, IDLE, { type: 'Moved', owner: 'p2' }],
    ['busy is Active however long ago it began', session({ state: 'busy' }), undefined, T0 + 100 * IDLE, IDLE, { type: 'Active' }],
    ['idle timeout 0 means never', session(), undefined, T0 + 100 * IDLE, 0, { type: 'Active' }],
    ['idle within the timeout', session(), undefined, T0 + 1_000, IDLE, { type: 'Idle', deadline: T0 + IDLE }],
    ['idle past the timeout', session(), undefined, T0 + IDLE, IDLE, { type: 'IdleExpired', idleMs: IDLE }],
    ['a later assignment restarts the idle clock', session(), T0 + 20_000, T0 + IDLE, IDLE, { type: 'Idle', deadline: T0 + 20_000 + IDLE }],
  ])('%s', (_name, s, assignedAt, now, idle, expected) => {
    expect(assignmentCondition('p1', assignedAt, s, now, idle)).toEqual(expected)
  })
})
