import { ClientFrames, type ClientFrame, type FrameType } from '../../../contract/frames.ts'
import { type RequestId, ServiceError, type SteeringReply } from '../../../contract/mod.ts'
import { invalidFieldMessage } from '../../errors.ts'

/** Reading the frames a client sends on /ws/v1/agent (their schemas: contract/frames.ts). */

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

/** A client's answer to a permission request or question, as it travels to the runner that asked. */
export function steeringReply(frame: Extract<ClientFrame, { type: 'permission_reply' | 'answer' | 'reject' }>): SteeringReply {
  switch (frame.type) {
    case 'permission_reply':
      return { kind: 'permission', id: frame.permission_id, decision: frame.decision, ...(frame.message !== undefined && { message: frame.message }) }
    case 'answer':
      return { kind: 'answer', id: frame.question_id, answers: frame.answers }
    case 'reject':
      return { kind: 'reject', id: frame.question_id, ...(frame.message !== undefined && { message: frame.message }) }
  }
}

/** The client's `type` for an error message: short, and safe for any value (a huge string, a deeply nested array). */
function describeType(type: unknown): string {
  if (type === undefined || type === null) return 'null'
  if (typeof type !== 'string') return `(a ${Array.isArray(type) ? 'list' : typeof type})`
  return JSON.stringify(type.length > 64 ? `${type.slice(0, 64)}…` : type)
}
