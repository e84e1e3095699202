import { reconcileAssignments } from './assignment.ts'
import { reconcileDemands } from './demand.ts'
import { reconcileLostPods } from './lost.ts'
import { reconcileReadiness } from './readiness.ts'
import { isLive, type Action, type Plan, type World } from './view.ts'
import { reconcileWarmPool } from './warm-pool.ts'

/**
 * One reconcile pass over the world: each duty's reconciler in turn, pods it
 * deletes taken out before the warm pool counts, creations kept within
 * max_pods. Pure: the same world gives the same plan.
 */
export function planReconcile(world: World): Plan {
  const actions: Action[] = []
  const wakeAt: number[] = []
  const add = (plan: Plan) => {
    actions.push(...plan.actions)
    wakeAt.push(...plan.wakeAt)
  }
  add(reconcileLostPods(world))
  add(reconcileReadiness(world))
  add(reconcileAssignments(world))
  const doomed = new Set(actions.flatMap((a) => (a.kind === 'delete' ? [a.pod] : [])))
  const alive = world.pods.filter((p) => isLive(p) && !doomed.has(p.name)).length + world.inflight.length
  let capacity = Math.max(0, world.limits.maxPods - alive)
  const demand = reconcileDemands(world, doomed, capacity)
  add(demand)
  capacity -= demand.created
  add(reconcileWarmPool(world, doomed, capacity))
  return { actions: dedupe(actions), wakeAt }
}

/** One delete per pod (the first reason wins), one fail/release per session and pod. */
function dedupe(actions: Action[]): Action[] {
  const seen = new Set<string>()
  return actions.filter((action) => {
    const key =
      action.kind === 'delete'
        ? `delete:${action.pod}`
        : action.kind === 'fail' || action.kind === 'release'
          ? `${action.kind}:${action.sessionId}:${action.pod}`
          : undefined
    if (key === undefined) return true
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
