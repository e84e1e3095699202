import { assignmentCondition } from './conditions.ts'
import { isLive, type Action, type DeleteReason, type Plan, type World } from './view.ts'

/**
 * Assigned pods. A pod whose runner claimed a session (registry owner = pod
 * name) is labelled with it, which takes it out of the warm count so the pool
 * refills. An assigned pod whose session closed, went away, moved to another
 * runner or sat idle past session_idle_timeout is deleted.
 */
export function reconcileAssignments(world: World): Plan {
  const actions: Action[] = []
  const wakeAt: number[] = []
  for (const pod of world.pods) {
    if (!isLive(pod) || pod.changing) continue
    const owned = world.owners.get(pod.name)
    if (pod.sessionId === undefined) {
      if (owned === undefined) continue
      if (owned.state === 'closed') {
        actions.push(remove(pod.name, 'SessionClosed', `session ${owned.session_id} closed`))
        continue
      }
      actions.push({ kind: 'assign', pod: pod.name, resourceVersion: pod.resourceVersion, sessionId: owned.session_id })
      continue
    }
    const condition = assignmentCondition(
      pod.name,
      pod.assignedAt,
      world.sessions.get(pod.sessionId),
      world.now,
      world.limits.idleTimeoutMs,
      world.placesSessions ? world.limits.claimTimeoutMs : 0,
    )
    switch (condition.type) {
      case 'Active':
        break
      case 'Idle':
        wakeAt.push(condition.deadline)
        break
      case 'IdleExpired':
        actions.push(remove(pod.name, 'IdleTimeout', `session ${pod.sessionId} idle for ${Math.round(condition.idleMs / 1000)} s`))
        // Let the registry forget the owner now, so the next execute is placed at once.
        actions.push({ kind: 'release', sessionId: pod.sessionId, pod: pod.name })
        break
      case 'Closed':
        actions.push(remove(pod.name, 'SessionClosed', `session ${pod.sessionId} closed`))
        break
      case 'Gone':
        actions.push(remove(pod.name, 'SessionGone', `session ${pod.sessionId} is no longer in the registry (orphan)`))
        break
      case 'Moved':
        actions.push(remove(pod.name, 'SessionMoved', `session ${pod.sessionId} is owned by ${condition.owner} now`))
        break
      case 'Released':
        actions.push(remove(pod.name, 'SessionMoved', `session ${pod.sessionId} has no owner any more`))
        break
    }
  }
  return { actions, wakeAt }
}

function remove(pod: string, reason: DeleteReason, message: string): Action {
  return { kind: 'delete', pod, reason, message }
}
