import { createHash } from 'node:crypto'

/**
 * Labels and annotations the controller puts on sandbox pods. Labels select
 * (the pool, warm vs assigned, the NetworkPolicy); annotations carry what a
 * label cannot hold (session ids are free text up to 256 characters).
 */
export const LABEL = {
  /** `app.kubernetes.io/component=sandbox` on every sandbox pod: the NetworkPolicy selects it. */
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  /** The pool (controller.pool): one controller's pods. */
  pool: 'agent-runtime.io/pool',
  /** `warm` (waiting for a session), `cold` (made for one session's demand) or `assigned`. */
  state: 'agent-runtime.io/state',
  /** The owning session, as a label-safe value (sessionLabelValue). */
  session: 'agent-runtime.io/session',
} as const

export const ANNOTATION = {
  /** The full session id of an assigned pod. */
  sessionId: 'agent-runtime.io/session-id',
  /** The session a cold pod was made for (its demand). */
  demandFor: 'agent-runtime.io/demand-for',
  /** Epoch ms when the pod was assigned; the assignment's idle timer starts here at the latest. */
  assignedAt: 'agent-runtime.io/assigned-at',
} as const

export const COMPONENT = 'sandbox'
export const MANAGED_BY = 'agent-runtime-controller'

export type PodState = 'warm' | 'cold' | 'assigned'

/** The label selector of one pool's sandbox pods. */
export function poolSelector(pool: string): string {
  return `${LABEL.component}=${COMPONENT},${LABEL.pool}=${pool}`
}

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/

/** A session id as a label value: itself when label-safe, else `h-` + 40 hex digits of its SHA-256. */
export function sessionLabelValue(sessionId: string): string {
  if (LABEL_VALUE.test(sessionId) && !sessionId.startsWith('h-')) return sessionId
  return 'h-' + createHash('sha256').update(sessionId, 'utf8').digest('hex').slice(0, 40)
}
