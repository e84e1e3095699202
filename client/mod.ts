/**
 * The typed client of the native WebSocket protocol, for Node
 * (`import { connect } from 'agent-runtime-service/client'`).
 */
import { AgentClient, type ConnectOptions } from './client.ts'
import { openNodeSocket } from './node-socket.ts'

/** Connects to the service; rejects when it cannot be reached or refuses the key. */
export function connect(options: ConnectOptions): Promise<AgentClient> {
  return new AgentClient(options, openNodeSocket).start()
}

export { AgentClient } from './client.ts'
export type { ConnectOptions, ConnectionStatus } from './client.ts'
export { Session } from './session.ts'
export type { ExecuteOptions } from './session.ts'
export type { PermissionRequested, PermissionResolved, QuestionAsked, QuestionResolved, SteeringRequest, SteeringResolution } from './steering.ts'
export type { PermissionHandler, QuestionHandler, SteeringContext } from './steering-watch.ts'
export { HandshakeError } from './transport.ts'
export { RETRYABLE_CODES, DEFAULT_RETRY } from './backoff.ts'
export type { RetryPolicy } from './backoff.ts'
export { ServiceError, isTurnEnd } from '../contract/mod.ts'
export type { ServiceEvent, EventName, EventOf, ErrorCode, Stats, Answers, PermissionDecision } from '../contract/mod.ts'
