import { ServiceError, type Command, type ReplyOf } from '../../contract/mod.ts'
import type { Lifecycle } from '../../service/lifecycle.ts'
import { RunnerClient } from '../runner-client.ts'
import type { SessionHub } from '../session-hub.ts'
import type { ActiveSessions } from './active-sessions.ts'

/**
 * The RunnerClient every surface uses, with admission in front of `execute`:
 * while the service drains, new turns are refused with SHUTTING_DOWN; over
 * `limits.max_active_sessions`, a turn of a session not yet active is refused
 * with OVERLOADED. Other commands (stop, stats, close, version) always pass,
 * so a client can still stop its work during a shutdown. Each turn sent is
 * announced to the hub (SessionHub.startTurn), so that the surfaces following
 * it get all of its events even if the first ones are missed live.
 * Constructed with RunnerClient's own arguments, then `admitting(…)`.
 */
export class AdmittingRunnerClient extends RunnerClient {
  #active: ActiveSessions | undefined
  #lifecycle: Lifecycle | undefined
  #hub: SessionHub | undefined

  /** Sets the admission rules and the hub that learns of the turns sent; returns this. */
  admitting(active: ActiveSessions, hub: SessionHub, lifecycle?: Lifecycle): this {
    this.#active = active
    this.#hub = hub
    this.#lifecycle = lifecycle
    return this
  }

  override async send<C extends Command>(command: C): Promise<ReplyOf<C['type']>> {
    if (command.type !== 'execute') return super.send(command)
    if (this.#lifecycle?.draining) throw new ServiceError('SHUTTING_DOWN', 'the service is shutting down and takes no new turns; retry on another instance')
    const release = this.#active?.admit(command.session_id, command.turn_id)
    const turn = this.#hub?.startTurn(command.session_id, command.turn_id)
    try {
      const reply = await super.send(command)
      turn?.accepted((reply as ReplyOf<'execute'>).after_seq)
      return reply
    } catch (err) {
      release?.()
      turn?.refused()
      throw err
    }
  }
}
