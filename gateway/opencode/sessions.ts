import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { ServiceError, toServiceError, workDirProblem, workDirRejected } from '../../contract/mod.ts'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'
import { handOffTurn } from '../turns/hand-off.ts'
import type { EventBroadcast } from './broadcast.ts'
import { engineOfModel } from './engines.ts'
import { sessionNotFound } from './errors.ts'
import type { IdSource } from './ids.ts'
import { makePlan, type MapContext, type TurnEnd, type TurnPlan } from './mapping/state.ts'
import type { MessageStore } from './message-store.ts'
import type { PromptInput } from './prompt-input.ts'
import type { OpencodeSessionRecord, OpencodeSessionStore } from './session-store.ts'
import type { CreateSessionBody } from './schemas/request.ts'
import type { SessionInfo } from './schemas/session.ts'
import { DEFAULT_PROJECT, directoryFor, newSessionInfo } from './session-info.ts'
import { DEFAULT_TENANT } from '../auth/config.ts'
import type { SessionOwners } from '../auth/owners.ts'

export interface SessionsDeps {
  sessionStore: OpencodeSessionStore
  store: MessageStore
  runners: Pick<Runners, 'send'>
  /** Follows the sessions' events; learns of each turn handed off, and makes new subscriptions active (ready). */
  hub: SessionHub
  broadcast: EventBroadcast
  ctx: MapContext
  ids: IdSource
  version: string
  workBase?: string | undefined
  log: Logger
  /** Session ownership across surfaces (gateway/auth/owners.ts); none: one tenant. */
  owners?: SessionOwners | undefined
}

/** A prompt that was accepted: its turn, its user message, and the turn's end to come. */
export interface AcceptedPrompt {
  turnId: string
  plan: TurnPlan
  ended: Promise<TurnEnd>
}

/** The REST layer's sessions: the session store, the message store and the runner commands together. */
export class OpencodeSessions {
  readonly #deps: SessionsDeps

  constructor(deps: SessionsDeps) {
    this.#deps = deps
  }

  /**
   * Creates a session, or answers the existing one when `session_id` names it (a client regaining its session).
   * A work_dir the runner would refuse is refused here, before any session exists (WORK_DIR_REJECTED).
   */
  async create(body: CreateSessionBody, tenant: string): Promise<SessionInfo> {
    const { sessionStore, ctx, ids, version, workBase } = this.#deps
    if (body.work_dir !== undefined) {
      const problem = workDirProblem(body.work_dir, workBase)
      if (problem !== undefined) throw workDirRejected(body.work_dir, problem)
    }
    const id = body.session_id ?? ids('ses')
    // An id another tenant uses (on any surface) is not there for this one.
    await this.#deps.owners?.admit(tenant, id)
    const record: OpencodeSessionRecord = {
      info: newSessionInfo({ id, directory: directoryFor(workBase, id, body.work_dir), title: body.title, now: ctx.now(), version }),
      tenant,
    }
    if (body.work_dir !== undefined) record.work_dir = body.work_dir
    const { record: stored, created } = await sessionStore.insert(record)
    if (!created && tenantOf(stored) !== tenant) throw sessionNotFound(id)
    if (!created && body.work_dir !== undefined && body.work_dir !== stored.work_dir) {
      throw new ServiceError(
        'WORK_DIR_MISMATCH',
        `session ${id} exists with work_dir ${JSON.stringify(stored.work_dir ?? null)}; work_dir must stay the same within a session`,
      )
    }
    await this.#open(stored)
    if (created) {
      this.#deps.log.info({ session_id: id, work_dir: body.work_dir }, 'session created')
      this.#publish('session.created', stored.info, tenant)
    }
    return stored.info
  }

  /** The session's record; SESSION_NOT_FOUND when there is none, or it is another tenant's. */
  async get(id: string, tenant: string): Promise<OpencodeSessionRecord> {
    const record = await this.#deps.sessionStore.get(id)
    if (!record || tenantOf(record) !== tenant) throw sessionNotFound(id)
    await this.#open(record)
    return record
  }

  /** Every session of the tenant, most recently updated first. */
  async list(tenant: string): Promise<SessionInfo[]> {
    const records = (await this.#deps.sessionStore.list()).filter((record) => tenantOf(record) === tenant)
    return records.map((record) => record.info).sort((a, b) => b.time.updated - a.time.updated)
  }

  /** Ends the session's work, frees its CLI process, forgets it. */
  async delete(id: string, tenant: string): Promise<true> {
    const record = await this.get(id, tenant)
    await this.#deps.runners.send({ type: 'close', session_id: id })
    await this.#deps.sessionStore.delete(id)
    this.#deps.store.close(id)
    this.#deps.log.info({ session_id: id }, 'session deleted')
    this.#publish('session.deleted', record.info, tenant)
    return true
  }

  /** Stops the running turn and drops the queued ones. */
  async abort(id: string, tenant: string): Promise<true> {
    await this.get(id, tenant)
    await this.#deps.runners.send({ type: 'stop', session_id: id, reason: 'aborted by the client' })
    return true
  }

  /** Starts a turn. Resolves once the runner accepted it; `ended` settles when it ends. */
  async prompt(id: string, tenant: string, input: PromptInput): Promise<AcceptedPrompt> {
    const { store, ctx } = this.#deps
    const record = await this.get(id, tenant)
    const turnId = `turn_${randomUUID()}`
    const plan = makePlan(ctx, turnId, { agent: input.agent, model: input.model, system: input.instructions, messageID: input.messageID })
    const engine = engineOfModel(input.model, ctx.defaults.model.providerID, ctx.defaults.model.modelID)
    const ended = store.plan(id, plan)
    try {
      await handOffTurn(this.#deps, {
        type: 'execute',
        session_id: id,
        turn_id: turnId,
        prompt: input.text,
        ...(input.instructions !== undefined && { instructions: input.instructions }),
        ...(record.work_dir !== undefined && { work_dir: record.work_dir }),
        ...(engine !== undefined && { engine }),
      })
    } catch (err) {
      store.drop(id, turnId, toServiceError(err).toBody())
      throw err
    }
    await this.#touch(record)
    return { turnId, plan, ended }
  }

  messages(id: string) {
    return this.#deps.store.messages(id)
  }

  /** The status of every session of the tenant. */
  async statuses(tenant: string): Promise<Record<string, { type: 'idle' | 'busy' }>> {
    const statuses: Record<string, { type: 'idle' | 'busy' }> = {}
    for (const record of await this.#deps.sessionStore.list())
      if (tenantOf(record) === tenant) statuses[record.info.id] = { type: this.#deps.store.status(record.info.id) }
    return statuses
  }

  async #open(record: OpencodeSessionRecord): Promise<void> {
    if (this.#deps.store.has(record.info.id)) return
    await this.#deps.store.open(record.info.id, record.info.directory, tenantOf(record))
    await this.#deps.hub.ready()
  }

  async #touch(record: OpencodeSessionRecord): Promise<void> {
    const info = { ...record.info, time: { ...record.info.time, updated: this.#deps.ctx.now() } }
    if (await this.#deps.sessionStore.update({ ...record, info })) this.#publish('session.updated', info, tenantOf(record))
  }

  #publish(type: 'session.created' | 'session.updated' | 'session.deleted', info: SessionInfo, tenant: string): void {
    this.#deps.broadcast.publish(
      {
        directory: info.directory,
        project: DEFAULT_PROJECT,
        payload: { id: this.#deps.ids('evt'), type, properties: { sessionID: info.id, info } },
      },
      tenant,
    )
  }
}

/** A record's tenant; records written before tenants existed are the tenant `default`'s. */
function tenantOf(record: OpencodeSessionRecord): string {
  return record.tenant ?? DEFAULT_TENANT
}
