import { podCondition } from './conditions.ts'
import { sessionOfPod, type Action, type Plan, type World } from './view.ts'

/** Why this controller's own deletions are not a lost sandbox (the session was done with it). */
const DELIBERATE = new Set(['SessionClosed', 'SessionGone', 'SessionMoved', 'IdleTimeout', 'NotReady', 'PodFinished', 'Unassignable'])

/**
 * Pods that went away under a session: finished (the runner exited, or the
 * kubelet evicted the pod), deleted by someone else (eviction API, node
 * drain, preemption), or vanished altogether. A session mid-turn gets
 * SANDBOX_LOST; its owner is released so the next execute is placed on
 * another runner. Finished pods are deleted.
 */
export function reconcileLostPods(world: World): Plan {
  const actions: Action[] = []
  const seen = new Set<string>()
  for (const pod of world.pods) {
    seen.add(pod.name)
    const condition = podCondition(pod, world.now, world.limits.readyTimeoutMs)
    let why: string
    if (condition.type === 'Finished') {
      actions.push({ kind: 'delete', pod: pod.name, reason: 'PodFinished', message: `pod ${condition.reason}` })
      why = `the sandbox pod ${pod.name} ended (${condition.reason})`
    } else if (condition.type === 'Terminating' && !DELIBERATE.has(world.deletedByUs.get(pod.name) ?? '')) {
      why = `the sandbox pod ${pod.name} is being deleted (evicted or preempted)`
    } else {
      continue
    }
    const session = sessionOfPod(pod, world)
    if (session !== undefined && session.owner === pod.name && session.state !== 'closed') {
      actions.push(...lose(session.session_id, session.state === 'busy', pod.name, why))
    } else if (pod.demandFor !== undefined && condition.type === 'Finished' && world.sessions.get(pod.demandFor)?.owner === undefined) {
      actions.push({ kind: 'fail', sessionId: pod.demandFor, pod: pod.name, code: 'SANDBOX_NOT_READY', message: `${why} before it was ready` })
    }
  }
  const inflight = new Set(world.inflight.map((p) => p.name))
  const ours = new RegExp(`^${world.pool}-[a-z0-9]{10}$`)
  for (const [owner, session] of world.owners) {
    if (seen.has(owner) || inflight.has(owner) || session.state === 'closed' || !ours.test(owner)) continue
    actions.push(...lose(session.session_id, session.state === 'busy', owner, `the sandbox pod ${owner} is gone`))
  }
  return { actions, wakeAt: [] }
}

function lose(sessionId: string, midTurn: boolean, pod: string, why: string): Action[] {
  const release: Action = { kind: 'release', sessionId, pod }
  if (!midTurn) return [release]
  return [{ kind: 'fail', sessionId, pod, code: 'SANDBOX_LOST', message: `${why}; the next execute starts on a new sandbox` }, release]
}
