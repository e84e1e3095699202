import type { DesiredSession } from '../sessions.ts'
import type { PodView } from './view.ts'

/**
 * Conditions with reasons, computed from what a pod and its session look
 * like now. Pure; each reconciler acts on these, and tests pin them with tables.
 */

/** Where a sandbox pod is in its life. */
export type PodCondition =
  | { type: 'Terminating' }
  | { type: 'Finished'; reason: string }
  | { type: 'Ready' }
  | { type: 'Starting'; deadline: number }
  | { type: 'ReadyTimeout'; waitedMs: number }

export function podCondition(pod: PodView, now: number, readyTimeoutMs: number): PodCondition {
  if (pod.deleting) return { type: 'Terminating' }
  if (pod.finished !== undefined) return { type: 'Finished', reason: pod.finished.reason }
  if (pod.ready) return { type: 'Ready' }
  const deadline = pod.createdAt + readyTimeoutMs
  if (now >= deadline) return { type: 'ReadyTimeout', waitedMs: now - pod.createdAt }
  return { type: 'Starting', deadline }
}

/** How an assigned pod's session stands, seen from that pod. */
export type AssignmentCondition =
  | { type: 'Active' }
  | { type: 'Idle'; deadline: number }
  | { type: 'IdleExpired'; idleMs: number }
  | { type: 'Closed' }
  /** The registry no longer has the session. */
  | { type: 'Gone' }
  /** Another runner owns the session now. */
  | { type: 'Moved'; owner: string }
  /** Nobody owns the session any more (the runner let it go). */
  | { type: 'Released' }

/**
 * `placedGraceMs`: a pod the controller placed a session on (per-session credentials) is labelled
 * before its runner records the session; until this long after the assignment a session not in the
 * registry yet, or not claimed yet, is waited for (`Idle`), not taken for gone.
 */
export function assignmentCondition(
  podName: string,
  assignedAt: number | undefined,
  session: DesiredSession | undefined,
  now: number,
  idleTimeoutMs: number,
  placedGraceMs = 0,
): AssignmentCondition {
  const waitingFor = assignedAt === undefined ? 0 : assignedAt + placedGraceMs
  if ((session === undefined || (session.owner === undefined && session.state !== 'closed')) && now < waitingFor) return { type: 'Idle', deadline: waitingFor }
  if (session === undefined) return { type: 'Gone' }
  if (session.state === 'closed') return { type: 'Closed' }
  if (session.owner === undefined) return { type: 'Released' }
  if (session.owner !== podName) return { type: 'Moved', owner: session.owner }
  if (session.state === 'busy' || idleTimeoutMs === 0) return { type: 'Active' }
  const idleSince = Math.max(session.last_active, assignedAt ?? 0)
  if (now >= idleSince + idleTimeoutMs) return { type: 'IdleExpired', idleMs: now - idleSince }
  return { type: 'Idle', deadline: idleSince + idleTimeoutMs }
}
