import type { SessionDeleted, SessionEventsPage, SessionList, SessionListQuery, SessionSummary } from '../../../contract/sessions.ts'
import type { EventLog, SessionRegistry } from '../../../state/mod.ts'
import { notFound, type SessionOwners } from '../../auth/owners.ts'
import type { Runners } from '../../runners.ts'
import { isClientVisible } from '../ws/dialect.ts'
import { eventsPage, sessionPage, toSummary } from './page.ts'

export interface SessionDirectoryDeps {
  /** Every session that ran a command, from any surface (WebSocket, REST, chat): the runners write it. */
  registry: SessionRegistry
  /** Stored events, for the JSON page of a session's events; none: every page is empty. */
  events?: EventLog | undefined
  /** Which tenant owns which session (gateway/auth/owners.ts); with one tenant every session is everyone's. */
  owners: SessionOwners
  runners: Runners
}

/**
 * The session directory (GET/DELETE /v1/sessions…): the registry's records seen through the
 * caller's tenant. A session of another tenant is SESSION_NOT_FOUND, exactly as one nobody
 * uses. Reads claim nothing: looking a session up does not make it the caller's.
 */
export class SessionDirectory {
  readonly #deps: SessionDirectoryDeps

  constructor(deps: SessionDirectoryDeps) {
    this.#deps = deps
  }

  /** One page of the tenant's sessions. The registry has no index by tenant, so each page reads it all (README: the directory's cost). */
  async list(tenant: string, query: SessionListQuery): Promise<SessionList> {
    const records = await this.#deps.registry.list()
    const owned = await Promise.all(records.map((record) => this.#deps.owners.owns(tenant, record.session_id)))
    return sessionPage(
      records.filter((_record, index) => owned[index]),
      query,
    )
  }

  async get(tenant: string, sessionId: string): Promise<SessionSummary> {
    const entry = (await this.#deps.owners.owns(tenant, sessionId)) ? await this.#deps.registry.get(sessionId) : undefined
    if (!entry) throw notFound(sessionId)
    return toSummary(entry.value)
  }

  /** The session's stored events after `afterSeq`; SESSION_NOT_FOUND when it is another tenant's, or has neither a record nor events. */
  async events(tenant: string, sessionId: string, afterSeq: number, limit: number): Promise<SessionEventsPage> {
    if (!(await this.#deps.owners.owns(tenant, sessionId))) throw notFound(sessionId)
    const { events, registry } = this.#deps
    const stored = events ? (await events.read(sessionId, afterSeq)).filter(isClientVisible) : []
    if (stored.length === 0 && (await registry.get(sessionId)) === undefined && ((await events?.lastSeq(sessionId)) ?? 0) === 0) throw notFound(sessionId)
    return eventsPage(sessionId, stored, afterSeq, limit)
  }

  /** Stops the session's work, ends its process and removes its record (the runner's `close`). */
  async delete(tenant: string, sessionId: string): Promise<SessionDeleted> {
    await this.get(tenant, sessionId)
    // A released session is claimed by the runner that takes the command, which then closes it and deletes its record.
    await this.#deps.runners.send({ type: 'close', session_id: sessionId })
    return { session_id: sessionId, deleted: true }
  }
}
