import { type EventOf, type ServiceEvent, steeringIdOf } from '../contract/events.ts'

/** A tool call waiting for a person's yes, as its event came. */
export type PermissionRequested = EventOf<'permission_request'>
/** A question of the agent, as its event came. */
export type QuestionAsked = EventOf<'question'>
export type PermissionResolved = EventOf<'permission_resolved'>
export type QuestionResolved = EventOf<'question_resolved'>
export type SteeringRequest = PermissionRequested | QuestionAsked
export type SteeringResolution = PermissionResolved | QuestionResolved

/** What one session event changes about the requests waiting for a person. */
export type SteeringChange = { opened: SteeringRequest } | { resolved: SteeringResolution; request: SteeringRequest | undefined } | undefined

/**
 * The requests of one session still open, read from its events in order: a
 * request opens, its resolution (from any client, the clock, a rule or the
 * turn's end) closes it. A request seen again (a second replay) changes
 * nothing, and neither does one already resolved. Pure.
 */
export class OpenRequests {
  readonly #open = new Map<string, SteeringRequest>()
  readonly #resolved = new Set<string>()

  observe(event: ServiceEvent): SteeringChange {
    if (event.event === 'permission_request' || event.event === 'question') {
      const id = steeringIdOf(event)
      if (this.#open.has(id) || this.#resolved.has(id)) return undefined
      this.#open.set(id, event)
      return { opened: event }
    }
    if (event.event === 'permission_resolved' || event.event === 'question_resolved') {
      const id = steeringIdOf(event)
      if (this.#resolved.has(id)) return undefined
      this.#resolved.add(id)
      const request = this.#open.get(id)
      this.#open.delete(id)
      return { resolved: event, request }
    }
    return undefined
  }

  /** The requests still waiting, oldest first. */
  list(): SteeringRequest[] {
    return [...this.#open.values()]
  }

  isOpen(id: string): boolean {
    return this.#open.has(id)
  }
}
