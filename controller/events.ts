import type { ErrorCode } from '../contract/mod.ts'

/** Codes of the session errors the controller raises (entries of the contract's error registry). */
export type SandboxErrorCode = Extract<ErrorCode, 'SANDBOX_NOT_READY' | 'SANDBOX_LOST'>

/**
 * How the controller tells the rest of the service about a session's sandbox.
 * The lead wires it to the bus (an `error` event on the session's subject) and
 * to the registry.
 */
export interface SessionEvents {
  /** The session gets an error event with this code; a running turn ends with it. */
  fail(sessionId: string, code: SandboxErrorCode, message: string): Promise<void>
  /**
   * The pod that owned the session is gone: clear the registry's owner if it
   * is still `runnerId` (compare-and-set), so the next execute is placed on
   * another runner at once rather than after the runner's lease expires.
   */
  release(sessionId: string, runnerId: string): Promise<void>
}

/** Records calls, for tests and the benchmark. */
export class MemorySessionEvents implements SessionEvents {
  readonly failures: { sessionId: string; code: SandboxErrorCode; message: string }[] = []
  readonly releases: { sessionId: string; runnerId: string }[] = []
  async fail(sessionId: string, code: SandboxErrorCode, message: string): Promise<void> {
    this.failures.push({ sessionId, code, message })
  }
  async release(sessionId: string, runnerId: string): Promise<void> {
    this.releases.push({ sessionId, runnerId })
  }
}
