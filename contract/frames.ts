import { z } from 'zod'
import { RequestId } from './events.ts'
import { EngineName, SessionId } from './commands.ts'
import { Answers, PermissionDecision, SteeringId } from './steering.ts'

/**
 * The last sequence of a session a client saw: it is sent what came after,
 * then the live events. In a frame (`execute`, `session_start`, `attach`) a
 * JSON number; as text (a URL's `?last_seq=`, SSE's `Last-Event-ID`) the
 * gateway reads it with gateway/native/last-seq.ts.
 */
export const LastSeq = z.number().int().min(0)

/**
 * Frames a client sends on /ws/v1/agent: the native requests (spec §2.3) and
 * the quick-start dialect (`session_start`, then `prompt`).
 */
const Common = { request_id: RequestId.optional() }

export const ClientFrames = {
  execute: z.object({
    type: z.literal('execute'),
    ...Common,
    session_id: SessionId.optional(),
    last_seq: LastSeq.optional(),
    prompt: z.string().min(1, 'prompt must not be empty'),
    instructions: z.string().optional(),
    work_dir: z.string().optional(),
    /** The engine a new session runs (a configured name; none: the default). */
    engine: EngineName.optional(),
  }),
  stop: z.object({ type: z.literal('stop'), ...Common, session_id: SessionId, reason: z.string().optional() }),
  stats: z.object({ type: z.literal('stats'), ...Common, session_id: SessionId }),
  /** The agent CLI's version: of the session's engine, of a named engine, else of the default one. */
  version: z.object({ type: z.literal('version'), ...Common, session_id: SessionId.optional(), engine: EngineName.optional() }),
  /** Follow a session's events without sending it anything (a client resuming after a reconnect). */
  attach: z.object({ type: z.literal('attach'), ...Common, session_id: SessionId, last_seq: LastSeq.optional() }),
  session_start: z.object({
    type: z.literal('session_start'),
    ...Common,
    session_id: SessionId.optional(),
    last_seq: LastSeq.optional(),
    work_dir: z.string().optional(),
    instructions: z.string().optional(),
    engine: EngineName.optional(),
  }),
  prompt: z.object({ type: z.literal('prompt'), ...Common, content: z.string().min(1, 'content must not be empty') }),
  /** The answer to a `permission_request`; `message` is what the agent reads on a deny. */
  permission_reply: z.object({
    type: z.literal('permission_reply'),
    ...Common,
    session_id: SessionId,
    permission_id: SteeringId,
    decision: PermissionDecision,
    message: z.string().max(10_000).optional(),
  }),
  /** The answer to a `question`: one list of chosen labels (or free text) per question. */
  answer: z.object({ type: z.literal('answer'), ...Common, session_id: SessionId, question_id: SteeringId, answers: Answers }),
  /** Declines to answer a `question`; the agent reads `message`. */
  reject: z.object({ type: z.literal('reject'), ...Common, session_id: SessionId, question_id: SteeringId, message: z.string().max(10_000).optional() }),
}

export type ClientFrame = { [K in keyof typeof ClientFrames]: z.output<(typeof ClientFrames)[K]> }[keyof typeof ClientFrames]
export type FrameType = ClientFrame['type']
