import type { Logger } from 'pino'
import { ServiceError, type SteeringReply } from '../../contract/mod.ts'
import type { Runners } from '../runners.ts'
import type { MessageStore } from './message-store.ts'
import type { RequestIndex } from './request-index.ts'
import type { Permission, Question } from './schemas/steering.ts'
import type { OpencodeSessions } from './sessions.ts'

export interface SteeringDeps {
  sessions: OpencodeSessions
  store: Pick<MessageStore, 'has' | 'status' | 'pending'>
  runners: Pick<Runners, 'send'>
  requests: RequestIndex
  log: Logger
  /**
   * Whether a session runs a turn, by the session registry (every gateway's view); none: not known, and a
   * session this gateway does not follow is asked all the same (OpencodeDeps.sessionBusy).
   */
  busy?: ((sessionId: string) => Promise<boolean>) | undefined
}

/** How many sessions are asked for their pending requests at once when a request id is not known here. */
const ASK_AT_ONCE = 8

/** Who answered, as the runner records it (`by` on permission_resolved / question_resolved). */
const BY = 'opencode'

/**
 * Steering over the OpenCode routes: the open requests (from the sessions'
 * events, as this gateway's streams showed them: no runner is asked) and the
 * answers (a `reply` command to the runner that asked, which takes the first
 * valid one).
 */
export class OpencodeSteering {
  readonly #deps: SteeringDeps

  constructor(deps: SteeringDeps) {
    this.#deps = deps
  }

  /** The open permission requests of the tenant's sessions this gateway follows (those its event streams carry). */
  async permissions(tenant: string): Promise<Permission[]> {
    return (await this.#followed(tenant)).flatMap((id) => this.#deps.store.pending(id).permissions)
  }

  /** The open questions of the tenant's sessions this gateway follows. */
  async questions(tenant: string): Promise<Question[]> {
    return (await this.#followed(tenant)).flatMap((id) => this.#deps.store.pending(id).questions)
  }

  /** One session's open requests; the session is followed from here on. SESSION_NOT_FOUND for another tenant's. */
  async ofSession(sessionId: string, tenant: string): Promise<{ permissions: Permission[]; questions: Question[] }> {
    await this.#deps.sessions.get(sessionId, tenant)
    return this.#deps.store.pending(sessionId)
  }

  /**
   * Sends an answer to the runner of the session that asked: the one given
   * (routes that name it), else the one the request id is known to be of.
   * The runner's refusals come back as they are (PERMISSION_NOT_FOUND,
   * ALREADY_ANSWERED, BAD_REQUEST).
   */
  async reply(tenant: string, reply: SteeringReply, sessionId?: string): Promise<void> {
    const session = sessionId ?? (await this.#locate(tenant, reply.id))
    await this.#deps.sessions.get(session, tenant)
    await this.#deps.runners.send({ type: 'reply', session_id: session, reply, by: BY })
  }

  async #followed(tenant: string): Promise<string[]> {
    return (await this.#deps.sessions.list(tenant)).map((info) => info.id).filter((id) => this.#deps.store.has(id))
  }

  /**
   * The session a request id is of: known from an event seen here, else asked
   * of the runners (`pending`) for the tenant's sessions that may hold it, the
   * most recently prompted first: those running a turn here (its event may
   * still be on its way) and those this gateway does not follow (another
   * gateway's: their events never came here) unless the registry says they
   * are idle. An idle session has nothing waiting and is not asked: asking
   * one that no runner holds would have a runner take it up, or a pod start.
   */
  async #locate(tenant: string, requestId: string): Promise<string> {
    const { requests, store, runners, sessions, busy } = this.#deps
    const known = requests.sessionOf(requestId)
    if (known !== undefined) return known
    const ids = (await sessions.list(tenant)).map((info) => info.id)
    const mayHold = await Promise.all(ids.map(async (id) => (store.has(id) ? store.status(id) === 'busy' : ((await busy?.(id).catch(() => true)) ?? true))))
    const candidates = ids.filter((_, i) => mayHold[i])
    for (let i = 0; i < candidates.length; i += ASK_AT_ONCE) {
      const batch = candidates.slice(i, i + ASK_AT_ONCE)
      const answers = await Promise.allSettled(batch.map((id) => runners.send({ type: 'pending', session_id: id })))
      for (const [j, answer] of answers.entries()) {
        if (answer.status === 'rejected') {
          this.#deps.log.debug({ session_id: batch[j], err: answer.reason }, 'pending: no answer while looking for a request')
          continue
        }
        for (const request of [...answer.value.permissions, ...answer.value.questions]) requests.remember(request.id, batch[j]!)
      }
      const found = requests.sessionOf(requestId)
      if (found !== undefined) return found
    }
    throw new ServiceError('PERMISSION_NOT_FOUND', `no session of this client has a permission request or question ${requestId} waiting`)
  }
}
