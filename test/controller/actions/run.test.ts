import type { V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { describe, expect, test } from 'vitest'
import { actionKey } from '../../../controller/actions/key.ts'
import { ActionRunner } from '../../../controller/actions/run.ts'
import { MemorySessionEvents } from '../../../controller/events.ts'
import type { KubeApi } from '../../../controller/kube/client.ts'
import type { PodEvents } from '../../../controller/pod-events.ts'
import type { Action } from '../../../controller/reconcile/view.ts'
import type { SandboxPods } from '../../../controller/sandbox-pods.ts'
import { newStats } from '../../../controller/stats.ts'
import { WorldCaches } from '../../../controller/world/caches.ts'
import { PendingDemands } from '../../../controller/world/demands.ts'

const NOW = 1_000_000
const pod = (name: string, resourceVersion = '1'): V1Pod => ({ metadata: { name, resourceVersion }, status: { phase: 'Running' } })

/** An API error as client-node raises one, or a failure that is not an HTTP answer. */
const failure = (status: number | undefined) =>
  Object.assign(new Error(status === undefined ? 'socket hang up' : `HTTP ${status}`), status === undefined ? {} : { statusCode: status })

/** A runner whose API calls and session events all fail with `status` (or all succeed). */
function runner(status: number | 'ok') {
  const fail = async () => {
    if (status !== 'ok') throw failure(status)
    return pod('p1')
  }
  const api = { namespace: 'ns', patchPodMetadata: fail, deletePod: fail } as unknown as KubeApi
  const events = new MemorySessionEvents()
  if (status !== 'ok') {
    const refuse = async () => {
      throw failure(undefined)
    }
    events.fail = refuse
    events.release = refuse
  }
  const caches = new WorldCaches()
  const demands = new PendingDemands()
  const stats = newStats()
  let soon = 0
  const run = new ActionRunner({
    api,
    log: pino({ level: 'silent' }),
    caches,
    demands,
    events,
    podEvents: { record() {} } as unknown as PodEvents,
    pods: { create: async () => true } as unknown as SandboxPods,
    placement: undefined,
    stats,
    soon: () => void soon++,
  })
  return { run, caches, demands, stats, soon: () => soon }
}

/** What the caches remember of pod p1 and of its session s1 after the action. */
function remembered(caches: WorldCaches) {
  const seen = caches.look([pod('p1')], NOW, 30_000)
  return {
    changing: seen.pods[0]!.changing,
    deleting: seen.pods[0]!.deleting,
    failReported: caches.report(actionKey({ kind: 'fail', sessionId: 's1', pod: 'p1', code: 'SANDBOX_LOST', message: '' }), NOW) === undefined,
    releaseReported: caches.report(actionKey({ kind: 'release', sessionId: 's1', pod: 'p1' }), NOW) === undefined,
  }
}

const none = { changing: false, deleting: false, failReported: false, releaseReported: false }

const actions: { action: Action; records: Partial<typeof none> }[] = [
  { action: { kind: 'assign', pod: 'p1', resourceVersion: '1', sessionId: 's1' }, records: { changing: true } },
  { action: { kind: 'warm', pod: 'p1', resourceVersion: '1' }, records: { changing: true } },
  { action: { kind: 'delete', pod: 'p1', reason: 'Surplus', message: 'surplus' }, records: { deleting: true } },
  { action: { kind: 'fail', sessionId: 's1', pod: 'p1', code: 'SANDBOX_LOST', message: 'lost' }, records: { failReported: true } },
  { action: { kind: 'release', sessionId: 's1', pod: 'p1' }, records: { releaseReported: true } },
]

describe('action runner - bookkeeping and its undo', () => {
  test.each(actions)('action runner - $action.kind that went through keeps its bookkeeping', async ({ action, records }) => {
    const r = runner('ok')
    expect(await r.run.run(action, NOW)).toBe(true)
    expect(remembered(r.caches)).toEqual({ ...none, ...records })
  })

  test.each(actions)('action runner - $action.kind that failed takes its bookkeeping back and asks for a back-off', async ({ action }) => {
    const r = runner(500)
    expect(await r.run.run(action, NOW)).toBe(false)
    expect(remembered(r.caches)).toEqual(none)
    expect(r.stats.conflicts).toBe(0)
  })

  const stale = actions
    .filter((row) => row.action.kind !== 'fail' && row.action.kind !== 'release')
    .flatMap((row) => [409, 404].map((status) => ({ ...row, status })))
  test.each(stale)(
    'action runner - $action.kind answered $status (a stale cache) takes its bookkeeping back and asks for a pass soon',
    async ({ action, status }) => {
      const r = runner(status)
      expect(await r.run.run(action, NOW)).toBe(true)
      expect(remembered(r.caches)).toEqual(none)
      expect(r.stats.conflicts).toBe(1)
      expect(r.soon()).toBe(1)
    },
  )
})

describe('action runner - reports', () => {
  test('action runner - a failure already reported is not sent again', async () => {
    const r = runner('ok')
    const action: Action = { kind: 'fail', sessionId: 's1', pod: 'p1', code: 'SANDBOX_LOST', message: 'lost' }
    await r.run.run(action, NOW)
    await r.run.run(action, NOW + 1)
    expect(r.stats.failures).toBe(1)
  })

  test('action runner - an answer goes to the session waiting for it', async () => {
    const r = runner('ok')
    const waiting = r.demands.wait('s1', NOW)
    await r.run.run({ kind: 'answer', sessionId: 's1', answer: { ok: true, pod: 'p1', created: false } }, NOW)
    expect(await waiting).toEqual({ ok: true, pod: 'p1', created: false })
  })
})
