import { ServiceError, type Command, type ReplyOf } from '../../contract/mod.ts'
import type { GatewayLifecycle } from '../lifecycle.ts'
import type { Runners } from '../runners.ts'
import type { ActiveSessions } from './active-sessions.ts'

/**
 * The Runners every surface uses, with admission in front of `execute`:
 * while the service drains, new turns are refused with SHUTTING_DOWN; over
 * `limits.max_active_sessions`, a turn of a session not yet active is refused
 * with OVERLOADED. Other commands (stop, stats, close, version) always pass,
 * so a client can still stop its work during a shutdown.
 */
export class AdmittingRunners implements Runners {
  readonly #inner: Runners
  readonly #active: ActiveSessions
  readonly #lifecycle: GatewayLifecycle | undefined

  constructor(inner: Runners, active: ActiveSessions, lifecycle?: GatewayLifecycle) {
    this.#inner = inner
    this.#active = active
    this.#lifecycle = lifecycle
  }

  async send<C extends Command>(command: C): Promise<ReplyOf<C['type']>> {
    if (command.type !== 'execute') return this.#inner.send(command)
    if (this.#lifecycle?.draining) throw new ServiceError('SHUTTING_DOWN', 'the service is shutting down and takes no new turns; retry on another instance')
    const release = this.#active.admit(command.session_id, command.turn_id)
    try {
      return await this.#inner.send(command)
    } catch (err) {
      release()
      throw err
    }
  }

  recoverLost(sessionIds: readonly string[]): Promise<void> {
    return this.#inner.recoverLost(sessionIds)
  }
}
