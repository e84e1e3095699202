/** The message contract between gateway and runner: subjects, commands, events, errors. */
export { subjects, sessionToken } from './subjects.ts'
export type { Subjects } from './subjects.ts'
export { Commands, Command, EngineName, EngineStatus, Replies, SessionId, okReply, errorReply, decodeReply, RUNNER_HEADER } from './commands.ts'
export type { CommandOf, ReplyOf } from './commands.ts'
export { Events, ServiceEventSchema, parseEvent, isTurnEnd, isLiveOnly, LIVE_ONLY_EVENTS, RequestId, steeringIdOf } from './events.ts'
export type { EventName, EventOf, ServiceEvent, SteeringEvent } from './events.ts'
export { joinEvents, splitEvents } from './event-batch.ts'
export { ErrorBody, ErrorCodes, ServiceError, toServiceError, isErrorCode } from './errors.ts'
export type { ErrorCode } from './errors.ts'
export { Stats, emptyStats, addStats } from './stats.ts'
export { DemandAnswer, DemandRefusal, DemandRequest } from './demand.ts'
export { isInside, workDirProblem, workDirRejected, workDirRoot } from './work-dir.ts'
export {
  Answers,
  PendingRequests,
  PermissionDecision,
  PermissionRequest,
  QuestionItem,
  QuestionRequest,
  ReplyBody,
  ResolutionSource,
  SteeringReply,
  replyOfBody,
} from './steering.ts'
