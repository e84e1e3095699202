import { z } from 'zod'
import { RequestId, ServiceError, SessionId } from '../../../contract/mod.ts'
import { invalidFieldMessage } from '../../errors.ts'
import { LastSeq } from '../last-seq.ts'

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
  }),
  stop: z.object({ type: z.literal('stop'), ...Common, session_id: SessionId, reason: z.string().optional() }),
  stats: z.object({ type: z.literal('stats'), ...Common, session_id: SessionId }),
  version: z.object({ type: z.literal('version'), ...Common }),
  /** Follow a session's events without sending it anything (a client resuming after a reconnect). */
  attach: z.object({ type: z.literal('attach'), ...Common, session_id: SessionId, last_seq: LastSeq.optional() }),
  session_start: z.object({
    type: z.literal('session_start'),
    ...Common,
    session_id: SessionId.optional(),
    last_seq: LastSeq.optional(),
    work_dir: z.string().optional(),
    instructions: z.string().optional(),
  }),
  prompt: z.object({ type: z.literal('prompt'), ...Common, content: z.string().min(1, 'content must not be empty') }),
}

export type ClientFrame = { [K in keyof typeof ClientFrames]: z.output<(typeof ClientFrames)[K]> }[keyof typeof ClientFrames]
export type FrameType = ClientFrame['type']

/** The request_id of a frame, if it has a usable one, for echoing on errors. */
export function frameRequestId(raw: unknown): RequestId | undefined {
  const id = (raw as { request_id?: unknown } | null)?.request_id
  return typeof id === 'number' || (typeof id === 'string' && id.length <= 200) ? id : undefined
}

/** Validates one decoded frame; the error names the field that is wrong. */
export function parseFrame(raw: unknown): ClientFrame {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ServiceError('BAD_REQUEST', 'a frame must be a JSON object with a "type" field')
  }
  const type = (raw as { type?: unknown }).type
  if (typeof type !== 'string' || !Object.hasOwn(ClientFrames, type)) {
    const known = Object.keys(ClientFrames).join(', ')
    throw new ServiceError('UNKNOWN_TYPE', `unknown frame type ${describeType(type)}; expected one of ${known}`)
  }
  const result = ClientFrames[type as FrameType].safeParse(raw)
  if (!result.success) {
    throw new ServiceError('BAD_REQUEST', `${type}: ${invalidFieldMessage(result.error.issues[0]!, raw, 'frame')}`)
  }
  return result.data as ClientFrame
}

/** The client's `type` for an error message: short, and safe for any value (a huge string, a deeply nested array). */
function describeType(type: unknown): string {
  if (type === undefined || type === null) return 'null'
  if (typeof type !== 'string') return `(a ${Array.isArray(type) ? 'list' : typeof type})`
  return JSON.stringify(type.length > 64 ? `${type.slice(0, 64)}…` : type)
}
