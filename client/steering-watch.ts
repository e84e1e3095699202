import { steeringIdOf, type ServiceEvent } from '../contract/events.ts'
import {
  OpenRequests,
  type PermissionRequested,
  type PermissionResolved,
  type QuestionAsked,
  type QuestionResolved,
  type SteeringRequest,
  type SteeringResolution,
} from './steering.ts'

/** What a handler gets with a request: aborted (its reason the resolution) and resolved once anyone settles it. */
export interface SteeringContext<R extends SteeringResolution> {
  signal: AbortSignal
  resolution: Promise<R>
}

export type PermissionHandler = (request: PermissionRequested, context: SteeringContext<PermissionResolved>) => void
export type QuestionHandler = (request: QuestionAsked, context: SteeringContext<QuestionResolved>) => void

interface Settlement {
  controller: AbortController
  resolution: Promise<SteeringResolution>
  resolve: (event: SteeringResolution) => void
}

/**
 * One session's requests for a person and the handlers that want them. A
 * request is handed to the handlers once, after the messages that came with
 * it are read (`defer`: the next turn of the event loop), so a replay that
 * carries a request and its resolution together never asks anyone; one that
 * is still open when a handler registers is handed to it at once.
 */
export class SteeringWatch {
  readonly #requests = new OpenRequests()
  readonly #defer: (run: () => void) => void
  readonly #waiting: SteeringRequest[] = []
  #flushing = false
  readonly #settlements = new Map<string, Settlement>()
  readonly #permissionHandlers = new Set<PermissionHandler>()
  readonly #questionHandlers = new Set<QuestionHandler>()

  constructor(defer: (run: () => void) => void = (run) => void setTimeout(run, 0)) {
    this.#defer = defer
  }

  observe(event: ServiceEvent): void {
    const change = this.#requests.observe(event)
    if (change === undefined) return
    if ('opened' in change) {
      this.#waiting.push(change.opened)
      if (!this.#flushing) {
        this.#flushing = true
        this.#defer(() => this.#flush())
      }
      return
    }
    const settlement = this.#settlements.get(steeringIdOf(change.resolved))
    if (settlement === undefined) return
    this.#settlements.delete(steeringIdOf(change.resolved))
    settlement.resolve(change.resolved)
    settlement.controller.abort(change.resolved)
  }

  onPermission(handler: PermissionHandler): () => void {
    this.#permissionHandlers.add(handler)
    for (const request of this.#announced()) if (request.event === 'permission_request') this.#hand(request, [handler], [])
    return () => void this.#permissionHandlers.delete(handler)
  }

  onQuestion(handler: QuestionHandler): () => void {
    this.#questionHandlers.add(handler)
    for (const request of this.#announced()) if (request.event === 'question') this.#hand(request, [], [handler])
    return () => void this.#questionHandlers.delete(handler)
  }

  /** The client closed: every handler still waiting is aborted (with no resolution). */
  close(reason: Error): void {
    for (const settlement of this.#settlements.values()) settlement.controller.abort(reason)
    this.#settlements.clear()
    this.#permissionHandlers.clear()
    this.#questionHandlers.clear()
  }

  #announced(): SteeringRequest[] {
    return this.#requests.list().filter((request) => this.#settlements.has(steeringIdOf(request)))
  }

  #flush(): void {
    this.#flushing = false
    for (const request of this.#waiting.splice(0)) {
      if (!this.#requests.isOpen(steeringIdOf(request))) continue
      this.#hand(request, this.#permissionHandlers, this.#questionHandlers)
    }
  }

  #hand(request: SteeringRequest, permissionHandlers: Iterable<PermissionHandler>, questionHandlers: Iterable<QuestionHandler>): void {
    const settlement = this.#settlementOf(request)
    const context = { signal: settlement.controller.signal, resolution: settlement.resolution }
    if (request.event === 'permission_request') for (const handler of permissionHandlers) handler(request, context as SteeringContext<PermissionResolved>)
    else for (const handler of questionHandlers) handler(request, context as SteeringContext<QuestionResolved>)
  }

  #settlementOf(request: SteeringRequest): Settlement {
    const id = steeringIdOf(request)
    let settlement = this.#settlements.get(id)
    if (settlement === undefined) {
      let resolve!: (event: SteeringResolution) => void
      const resolution = new Promise<SteeringResolution>((done) => (resolve = done))
      settlement = { controller: new AbortController(), resolution, resolve }
      this.#settlements.set(id, settlement)
    }
    return settlement
  }
}
