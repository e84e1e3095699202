import type { Logger } from 'pino'
import type { SessionEvents } from '../events.ts'
import { apiStatus, isConflict, isNotFound, type KubeApi } from '../kube/client.ts'
import type { PodEvents } from '../pod-events.ts'
import type { Action } from '../reconcile/view.ts'
import { assignedMetadata, WARM_METADATA, type SandboxPods } from '../sandbox-pods.ts'
import type { ControllerStats } from '../stats.ts'
import type { Undo, WorldCaches } from '../world/caches.ts'
import type { PendingDemands } from '../world/demands.ts'
import { actionKey } from './key.ts'
import type { Placement } from './place.ts'

/**
 * Carries out one kind of action; false when it failed in a way worth a back-off. Bookkeeping
 * recorded before an API call is handed to `onFailure` with its undo, taken back should the call throw.
 */
type Handler<A extends Action> = (action: A, now: number, onFailure: (undo: Undo) => void) => Promise<boolean>

/** One handler per action kind. */
export type ActionHandlers = { [K in Action['kind']]: Handler<Extract<Action, { kind: K }>> }

export interface ActionRunnerOptions {
  api: KubeApi
  log: Logger
  caches: WorldCaches
  demands: PendingDemands
  events: SessionEvents
  podEvents: PodEvents
  pods: SandboxPods
  /** Per-session credentials: how a session is placed on a pod (`place` actions come only with it). */
  placement: Placement | undefined
  stats: ControllerStats
  /** Asks for another pass soon (after a conflict). */
  soon: () => void
}

/** Carries out the actions a reconcile pass planned, each against the API, the registry or a waiting demand. */
export class ActionRunner {
  readonly #log: Logger
  readonly #stats: ControllerStats
  readonly #soon: () => void
  readonly #handlers: ActionHandlers

  constructor(options: ActionRunnerOptions) {
    this.#log = options.log
    this.#stats = options.stats
    this.#soon = options.soon
    this.#handlers = actionHandlers(options)
  }

  /**
   * Carries out one action; false when it failed in a way worth a back-off. A 409 or 404 means
   * the cache was stale: the watch brings the pod's new version (or its deletion) and the next
   * pass retries.
   */
  async run(action: Action, now: number): Promise<boolean> {
    const undos: Undo[] = []
    const handler = this.#handlers[action.kind] as Handler<Action>
    try {
      return await handler(action, now, (undo) => undos.push(undo))
    } catch (err) {
      for (const undo of undos) undo()
      if (isConflict(err) || isNotFound(err)) {
        this.#stats.conflicts++
        this.#log.debug({ action: action.kind, status: apiStatus(err) }, 'stale pod version; the next pass retries')
        this.#soon()
        return true
      }
      this.#log.warn({ err, action: action.kind }, 'reconcile action failed')
      return false
    }
  }
}

function actionHandlers({ api, log, caches, demands, events, podEvents, pods, placement, stats }: ActionRunnerOptions): ActionHandlers {
  return {
    create: (action, now) => pods.create(action.purpose, now),
    assign: async (action, now, onFailure) => {
      onFailure(caches.changing(action.pod, action.resourceVersion))
      await api.patchPodMetadata(action.pod, action.resourceVersion, assignedMetadata(action.sessionId, now))
      stats.assigned++
      log.info({ pod: action.pod, session_id: action.sessionId }, 'pod assigned to its session')
      return true
    },
    warm: async (action, _now, onFailure) => {
      onFailure(caches.changing(action.pod, action.resourceVersion))
      await api.patchPodMetadata(action.pod, action.resourceVersion, WARM_METADATA)
      return true
    },
    delete: async (action, now, onFailure) => {
      onFailure(caches.deleting(action.pod, action.reason, now))
      await api.deletePod(action.pod)
      stats.deleted++
      log.info({ pod: action.pod, reason: action.reason }, `pod deleted: ${action.message}`)
      podEvents.record(action.pod, action.reason, action.message, action.reason === 'Surplus' || action.reason === 'SessionClosed' ? 'Normal' : 'Warning')
      return true
    },
    fail: async (action, now, onFailure) => {
      const undo = caches.report(actionKey(action), now)
      if (undo === undefined) return true
      onFailure(undo)
      stats.failures++
      log.warn({ session_id: action.sessionId, pod: action.pod, code: action.code }, action.message)
      podEvents.record(action.pod, action.code, action.message, 'Warning')
      await events.fail(action.sessionId, action.code, action.message)
      return true
    },
    release: async (action, now, onFailure) => {
      const undo = caches.report(actionKey(action), now)
      if (undo === undefined) return true
      onFailure(undo)
      await events.release(action.sessionId, action.pod)
      return true
    },
    answer: async (action) => {
      demands.answer(action.sessionId, action.answer)
      return true
    },
    place: (action, now) => placement!.place(action.pod, action.resourceVersion, action.sessionId, now),
  }
}
