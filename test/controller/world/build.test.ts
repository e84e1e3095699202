import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, test } from 'vitest'
import { ControllerConfigSchema } from '../../../controller/config.ts'
import type { DesiredSession } from '../../../controller/sessions.ts'
import { buildWorld, type WorldInput } from '../../../controller/world/build.ts'
import { WorldCaches } from '../../../controller/world/caches.ts'

const NOW = 1_000_000
const config = ControllerConfigSchema.parse({
  pool: 'pool',
  warm_pool: 3,
  max_pods: 7,
  pod_ready_timeout: '1m',
  session_idle_timeout: '10m',
  claim_timeout: '20s',
  resync_interval: '30s',
})
const pod = (name: string): V1Pod => ({ metadata: { name, resourceVersion: '1' }, status: { phase: 'Running' } })
const session = (session_id: string, owner?: string): DesiredSession => ({ session_id, state: 'idle', last_active: NOW, ...(owner !== undefined && { owner }) })

function input(over: Partial<WorldInput> = {}): WorldInput {
  return { now: NOW, config, pods: [], sessions: [], demands: [], caches: new WorldCaches(), placesSessions: false, ...over }
}

describe('build world', () => {
  test('build world - the limits come from the configuration', () => {
    const world = buildWorld(input())
    expect({ now: world.now, pool: world.pool, limits: world.limits }).toEqual({
      now: NOW,
      pool: 'pool',
      limits: { warmPool: 3, maxPods: 7, readyTimeoutMs: 60_000, idleTimeoutMs: 600_000, claimTimeoutMs: 20_000 },
    })
  })

  const rows: { name: string; over: Partial<WorldInput>; check: (world: ReturnType<typeof buildWorld>) => unknown; is: unknown }[] = [
    { name: 'every listed pod is in the world', over: { pods: [pod('a'), pod('b')] }, check: (w) => w.pods.map((p) => p.name), is: ['a', 'b'] },
    { name: 'sessions by id', over: { sessions: [session('s1'), session('s2', 'a')] }, check: (w) => [...w.sessions.keys()], is: ['s1', 's2'] },
    {
      name: 'owners by pod',
      over: { sessions: [session('s1'), session('s2', 'a')] },
      check: (w) => [...w.owners].map(([p, s]) => [p, s.session_id]),
      is: [['a', 's2']],
    },
    { name: 'the sessions waiting for a pod', over: { demands: ['s1', 's3'] }, check: (w) => w.demands, is: ['s1', 's3'] },
    { name: 'whether the controller places sessions', over: { placesSessions: true }, check: (w) => w.placesSessions, is: true },
    {
      name: 'what the caches know',
      over: {
        pods: [pod('a')],
        caches: withCaches((c) => {
          c.created('b', { kind: 'warm' }, NOW)
          c.deleting('a', 'Surplus', NOW)
          c.placing('a')
        }),
      },
      check: (w) => ({
        inflight: w.inflight.map((p) => p.name),
        deleting: w.pods[0]!.deleting,
        deletedByUs: [...w.deletedByUs],
        unplaceable: [...w.unplaceable],
      }),
      is: { inflight: ['b'], deleting: true, deletedByUs: [['a', 'Surplus']], unplaceable: ['a'] },
    },
  ]
  test.each(rows)('build world - $name', ({ over, check, is }) => {
    expect(check(buildWorld(input(over)))).toEqual(is)
  })
})

function withCaches(record: (caches: WorldCaches) => void): WorldCaches {
  const caches = new WorldCaches()
  record(caches)
  return caches
}
