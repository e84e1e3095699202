import { podCondition } from './conditions.ts'
import type { Action, Plan, World } from './view.ts'

/**
 * Pods that never became ready. Past pod_ready_timeout such a pod is deleted;
 * when it was made for a session that is still waiting (a cold pod nobody
 * claimed), that session gets SANDBOX_NOT_READY.
 */
export function reconcileReadiness(world: World): Plan {
  const actions: Action[] = []
  const wakeAt: number[] = []
  for (const pod of world.pods) {
    // An assigned pod's runner already claimed a session: it ran, whatever its probe says now.
    if (pod.changing || pod.sessionId !== undefined || world.owners.has(pod.name)) continue
    const condition = podCondition(pod, world.now, world.limits.readyTimeoutMs)
    if (condition.type === 'Starting') wakeAt.push(condition.deadline)
    if (condition.type !== 'ReadyTimeout') continue
    const waited = `${Math.round(condition.waitedMs / 1000)} s`
    actions.push({ kind: 'delete', pod: pod.name, reason: 'NotReady', message: `not ready after ${waited}` })
    const waiting = pod.demandFor
    if (waiting !== undefined && world.sessions.get(waiting)?.owner === undefined) {
      actions.push({
        kind: 'fail',
        sessionId: waiting,
        pod: pod.name,
        code: 'SANDBOX_NOT_READY',
        message: `the sandbox pod ${pod.name} was not ready after ${waited}`,
      })
    }
  }
  return { actions, wakeAt }
}
