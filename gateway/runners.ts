import type { Command, ReplyOf } from '../contract/mod.ts'

/**
 * What every surface needs of the runners: RunnerClient sends over the bus;
 * AdmittingRunners (gateway/limits/admission.ts) puts admission in front of it.
 */
export interface Runners {
  /** Runs a command; failures come back as ServiceError with a stable code. */
  send<C extends Command>(command: C): Promise<ReplyOf<C['type']>>
  /** Has a live runner take over the sessions whose owner is gone, ending their lost turns. */
  recoverLost(sessionIds: readonly string[]): Promise<void>
}
