import { isLive, type Action, type Plan, type PodView, type World } from './view.ts'

/**
 * The warm pool: `warm_pool` idle runner pods waiting for a session on the
 * placement queue. Pods being deleted this pass (`doomed`) do not count, so
 * replacements are made in the same pass. Surplus pods (the pool shrank, or
 * cold pods turned warm) are trimmed, not-ready and newest first.
 */
export function reconcileWarmPool(world: World, doomed: ReadonlySet<string>, capacity: number): Plan {
  const warm = world.pods.filter((p) => isWarm(p, world) && !doomed.has(p.name))
  // A pod on its way whose runner already claimed a session (the registry is quicker than the watch) is not warm.
  const starting = world.inflight.filter((p) => p.purpose.kind === 'warm' && !world.owners.has(p.name)).length
  const missing = world.limits.warmPool - warm.length - starting
  const actions: Action[] = []
  if (missing > 0) {
    for (let i = 0; i < Math.min(missing, capacity); i++) actions.push({ kind: 'create', purpose: { kind: 'warm' } })
  } else if (missing < 0) {
    const surplus = [...warm].sort((a, b) => Number(a.ready) - Number(b.ready) || b.createdAt - a.createdAt).slice(0, -missing)
    for (const pod of surplus) actions.push({ kind: 'delete', pod: pod.name, reason: 'Surplus', message: `the warm pool holds ${world.limits.warmPool}` })
  }
  return { actions, wakeAt: [] }
}

/** A pod that waits for a session: warm-labelled, alive, not claimed (per the registry) and not past its ready timeout. */
export function isWarm(pod: PodView, world: World): boolean {
  if (pod.state !== 'warm' || !isLive(pod) || pod.changing || pod.sessionId !== undefined || world.owners.has(pod.name)) return false
  return pod.ready || world.now < pod.createdAt + world.limits.readyTimeoutMs
}
