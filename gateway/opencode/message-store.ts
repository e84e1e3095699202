import type { Logger } from 'pino'
import type { ErrorBody } from '../../contract/mod.ts'
import { DEFAULT_TENANT } from '../auth/config.ts'
import type { EventListener } from '../session-hub.ts'
import { applyEvent, dropTurn, planTurn, type MapResult } from './mapping/apply.ts'
import { newSessionView, type MapContext, type SessionView, type TurnEnd, type TurnPlan } from './mapping/state.ts'
import { steeringIdOf } from '../../contract/mod.ts'
import { isSteeringEvent } from './mapping/steering.ts'
import type { RequestIndex } from './request-index.ts'
import type { OpencodeEvent } from './schemas/event.ts'
import type { MessageWithParts } from './schemas/message.ts'
import type { Permission, Question } from './schemas/steering.ts'

/** The part of SessionHub the store needs. */
export interface EventSource {
  attach(sessionId: string, listener: EventListener, options?: { afterSeq?: number; onReplayed?: () => void }): () => void
}

export interface MessageStoreDeps {
  events: EventSource
  ctx: MapContext
  /** Receives every OpenCode event the mapping produces, with the session's directory and tenant. */
  publish(event: OpencodeEvent, directory: string, tenant: string): void
  log: Logger
  /** Learns the session of every steering request seen (the routes that name only the request). */
  requests?: RequestIndex | undefined
}

interface Entry {
  view: SessionView
  tenant: string
  detach: () => void
  waiters: Map<string, Set<(end: TurnEnd) => void>>
}

/**
 * The messages and parts of each open session, built from its native events
 * as they arrive (whichever surface started the turn), published as OpenCode
 * events, and kept for GET /session/{id}/message. In memory, per gateway.
 */
export class MessageStore {
  readonly #deps: MessageStoreDeps
  readonly #sessions = new Map<string, Entry>()

  constructor(deps: MessageStoreDeps) {
    this.#deps = deps
  }

  /** Starts following the session's events; resolves once its stored history is in. A second call does nothing. */
  open(sessionID: string, directory: string, tenant = DEFAULT_TENANT): Promise<void> {
    if (this.#sessions.has(sessionID)) return Promise.resolve()
    const replayed = Promise.withResolvers<void>()
    const entry: Entry = { view: newSessionView(sessionID, directory), tenant, detach: () => {}, waiters: new Map() }
    this.#sessions.set(sessionID, entry)
    // From the first stored event: a session opened here after it ran elsewhere (another gateway, before a restart) shows its whole history.
    entry.detach = this.#deps.events.attach(
      sessionID,
      (event, _json, replayed) => {
        try {
          if (isSteeringEvent(event)) this.#deps.requests?.remember(steeringIdOf(event), sessionID)
          // History builds the view; only what happens now is published again.
          this.#apply(entry, applyEvent(entry.view, event, this.#deps.ctx), !replayed)
        } catch (err) {
          this.#deps.log.error({ session_id: sessionID, err, event: event.event }, 'could not map a native event to OpenCode events')
        }
      },
      { afterSeq: 0, onReplayed: () => replayed.resolve() },
    )
    return replayed.promise
  }

  /** Stops following the session; whoever waits on its turns learns they were stopped. */
  close(sessionID: string): void {
    const entry = this.#sessions.get(sessionID)
    if (!entry) return
    entry.detach()
    this.#sessions.delete(sessionID)
    for (const [turnId, waiters] of entry.waiters) for (const resolve of waiters) resolve({ turnId, end: 'stopped' })
  }

  closeAll(): void {
    for (const sessionID of [...this.#sessions.keys()]) this.close(sessionID)
  }

  has(sessionID: string): boolean {
    return this.#sessions.has(sessionID)
  }

  messages(sessionID: string): MessageWithParts[] {
    return this.#sessions.get(sessionID)?.view.messages ?? []
  }

  status(sessionID: string): 'idle' | 'busy' {
    return this.#sessions.get(sessionID)?.view.status ?? 'idle'
  }

  /** The session's permission requests and questions waiting for a person, oldest first; none when it is not followed. */
  pending(sessionID: string): { permissions: Permission[]; questions: Question[] } {
    const steering = this.#sessions.get(sessionID)?.view.steering
    if (!steering) return { permissions: [], questions: [] }
    return { permissions: [...steering.permissions.values()].map((w) => w.info), questions: [...steering.questions.values()].map((w) => w.info) }
  }

  /**
   * Announces a turn about to be started, and answers a promise of its end.
   * Call before sending execute, so that no event of the turn is missed.
   */
  plan(sessionID: string, plan: TurnPlan): Promise<TurnEnd> {
    const entry = this.#sessions.get(sessionID)
    if (!entry) return Promise.resolve({ turnId: plan.turnId, end: 'stopped' })
    const ended = new Promise<TurnEnd>((resolve) => {
      const waiters = entry.waiters.get(plan.turnId) ?? new Set()
      waiters.add(resolve)
      entry.waiters.set(plan.turnId, waiters)
    })
    this.#apply(entry, planTurn(entry.view, plan, this.#deps.ctx), true)
    return ended
  }

  /** Takes back a planned turn whose execute failed; its waiters get the error. */
  drop(sessionID: string, turnId: string, error: ErrorBody): void {
    const entry = this.#sessions.get(sessionID)
    if (!entry) return
    const result = dropTurn(entry.view, turnId, this.#deps.ctx)
    result.ended.push({ turnId, end: 'error', error })
    this.#apply(entry, result, true)
  }

  #apply(entry: Entry, result: MapResult, live: boolean): void {
    if (live) for (const event of result.events) this.#deps.publish(event, entry.view.directory, entry.tenant)
    for (const end of result.ended) {
      const waiters = entry.waiters.get(end.turnId)
      if (!waiters) continue
      entry.waiters.delete(end.turnId)
      for (const resolve of waiters) resolve(end)
    }
  }
}
