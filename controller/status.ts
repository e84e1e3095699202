import type { V1Pod } from '@kubernetes/client-node'
import { LABEL, type PodState } from './labels.ts'

/** The Kubernetes pod phases, plus what a pod without one counts as (Pending). */
export const POD_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] as const
export type PodPhase = (typeof POD_PHASES)[number]

/** How many sandbox pods of one state are in one phase. */
export interface PodCount {
  state: PodState
  phase: PodPhase
  count: number
}

/** The sandbox pods as /metrics shows them: every state × phase (zeros included), and the warm pods a session can take now. */
export interface PodSummary {
  counts: PodCount[]
  /** Warm, Running, Ready and not being deleted: what the warm pool holds right now. */
  warmReady: number
}

const STATES: readonly PodState[] = ['warm', 'cold', 'assigned']

/** Counts pods by state (label, as the reconcile reads it) and phase. Pure. */
export function summarizePods(pods: readonly V1Pod[]): PodSummary {
  const counts = new Map<string, number>()
  let warmReady = 0
  for (const pod of pods) {
    const label = pod.metadata?.labels?.[LABEL.state]
    const state: PodState = label === 'assigned' || label === 'cold' ? label : 'warm'
    const raw = pod.status?.phase ?? 'Pending'
    const phase: PodPhase = (POD_PHASES as readonly string[]).includes(raw) ? (raw as PodPhase) : 'Unknown'
    counts.set(`${state}/${phase}`, (counts.get(`${state}/${phase}`) ?? 0) + 1)
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
    if (state === 'warm' && phase === 'Running' && ready && pod.metadata?.deletionTimestamp == null) warmReady++
  }
  return {
    counts: STATES.flatMap((state) => POD_PHASES.map((phase) => ({ state, phase, count: counts.get(`${state}/${phase}`) ?? 0 }))),
    warmReady,
  }
}
