import type { DemandAnswer } from '../../contract/mod.ts'
import type { V1Pod } from '@kubernetes/client-node'
import type { SandboxErrorCode } from '../events.ts'
import { ANNOTATION, LABEL, type PodState } from '../labels.ts'
import type { PodPurpose } from '../pod-spec.ts'
import type { DesiredSession } from '../sessions.ts'

/**
 * The world one reconcile pass looks at (pods, sessions, demands, time) and
 * the actions it may ask for. Every reconcileX is a pure function of a World.
 */

/** The parts of a sandbox pod the reconcilers read. */
export interface PodView {
  name: string
  resourceVersion: string
  state: PodState
  /** The session of an assigned pod (annotation). */
  sessionId: string | undefined
  /** The session a cold pod was made for (annotation). */
  demandFor: string | undefined
  createdAt: number
  assignedAt: number | undefined
  /** Being deleted (by anyone), or deleted by this controller and not yet seen so. */
  deleting: boolean
  /** phase Failed or Succeeded: the runner is gone; `reason` e.g. Evicted. */
  finished: { phase: string; reason: string } | undefined
  ready: boolean
  /** When the Ready condition last became true. */
  readySince: number | undefined
  /** A label/annotation change of this controller is on its way: leave the pod alone this pass. */
  changing: boolean
}

export interface Limits {
  warmPool: number
  maxPods: number
  readyTimeoutMs: number
  idleTimeoutMs: number
  claimTimeoutMs: number
}

export interface World {
  now: number
  pool: string
  limits: Limits
  pods: PodView[]
  /** Pods created by this controller and not yet seen in the cache. */
  inflight: { name: string; purpose: PodPurpose }[]
  /** The registry by session id. */
  sessions: ReadonlyMap<string, DesiredSession>
  /** Pod name → the session it owns per the registry. */
  owners: ReadonlyMap<string, DesiredSession>
  /** Sessions waiting for a cold pod. */
  demands: readonly string[]
  /** Pods this controller deleted, by why. */
  deletedByUs: ReadonlyMap<string, DeleteReason>
  /**
   * Per-session credentials: the controller places every session itself (no pod is in the
   * placement queue) and hands the pod that session's credential.
   */
  placesSessions: boolean
  /** Pods not to place a session on now: being placed, or their runner did not listen a moment ago. */
  unplaceable: ReadonlySet<string>
}

export type DeleteReason = 'SessionClosed' | 'SessionGone' | 'SessionMoved' | 'IdleTimeout' | 'NotReady' | 'PodFinished' | 'Surplus' | 'Unassignable'

/** The answer to a session's demand for a cold pod (the wire shape of `<prefix>.controller.demand` replies). */
export type { DemandAnswer, DemandRefusal } from '../../contract/mod.ts'

export type Action =
  | { kind: 'create'; purpose: PodPurpose }
  | { kind: 'assign'; pod: string; resourceVersion: string; sessionId: string }
  /** Per-session credentials: hand `pod` the session and its credential, then label it assigned. */
  | { kind: 'place'; pod: string; resourceVersion: string; sessionId: string }
  /** A cold pod nobody claimed becomes an ordinary warm pod. */
  | { kind: 'warm'; pod: string; resourceVersion: string }
  | { kind: 'delete'; pod: string; reason: DeleteReason; message: string }
  | { kind: 'fail'; sessionId: string; pod: string; code: SandboxErrorCode; message: string }
  | { kind: 'release'; sessionId: string; pod: string }
  | { kind: 'answer'; sessionId: string; answer: DemandAnswer }

/** Actions plus the times at which the world will need another look. */
export interface Plan {
  actions: Action[]
  wakeAt: number[]
}

const time = (value: unknown): number | undefined => {
  if (value === undefined || value === null) return undefined
  const ms = value instanceof Date ? value.getTime() : Date.parse(String(value))
  return Number.isNaN(ms) ? undefined : ms
}

/** Reads a pod into a PodView. */
export function podView(pod: V1Pod, options: { deletedByUs: boolean; changing: boolean }): PodView {
  const labels = pod.metadata?.labels ?? {}
  const annotations = pod.metadata?.annotations ?? {}
  const phase = pod.status?.phase ?? 'Pending'
  const readyCondition = pod.status?.conditions?.find((c) => c.type === 'Ready')
  const ready = readyCondition?.status === 'True' && phase === 'Running'
  const state = labels[LABEL.state]
  const assignedAt = Number(annotations[ANNOTATION.assignedAt])
  return {
    name: pod.metadata!.name!,
    resourceVersion: pod.metadata?.resourceVersion ?? '',
    state: state === 'assigned' || state === 'cold' ? state : 'warm',
    sessionId: annotations[ANNOTATION.sessionId],
    demandFor: annotations[ANNOTATION.demandFor],
    createdAt: time(pod.metadata?.creationTimestamp) ?? 0,
    assignedAt: Number.isFinite(assignedAt) && assignedAt > 0 ? assignedAt : undefined,
    deleting: options.deletedByUs || pod.metadata?.deletionTimestamp != null,
    finished: phase === 'Failed' || phase === 'Succeeded' ? { phase, reason: pod.status?.reason ?? phase } : undefined,
    ready,
    readySince: ready ? time(readyCondition?.lastTransitionTime) : undefined,
    changing: options.changing,
  }
}

/** Pod name → session owned, from the registry. */
export function ownerIndex(sessions: Iterable<DesiredSession>): Map<string, DesiredSession> {
  const owners = new Map<string, DesiredSession>()
  for (const session of sessions) {
    if (session.owner === undefined) continue
    const known = owners.get(session.owner)
    // One runner serves one session; should the registry list two, the open and most recent one wins.
    if (
      known === undefined ||
      (known.state === 'closed' && session.state !== 'closed') ||
      (known.state === session.state && session.last_active > known.last_active)
    ) {
      owners.set(session.owner, session)
    }
  }
  return owners
}

/** The session a pod serves: its annotation, else the registry's owner index. */
export function sessionOfPod(pod: PodView, world: World): DesiredSession | undefined {
  if (pod.sessionId !== undefined) return world.sessions.get(pod.sessionId)
  return world.owners.get(pod.name)
}

/** A pod that may still serve: not finished, not being deleted. */
export const isLive = (pod: PodView) => !pod.deleting && pod.finished === undefined
