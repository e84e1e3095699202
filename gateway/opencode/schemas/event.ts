import { z } from 'zod'
import { Message, Part } from './message.ts'
import { NamedError, SessionInfo, SessionStatus } from './session.ts'
import { Permission, PermissionReply, Question } from './steering.ts'

/**
 * The OpenCode events this service emits on /event and /global/event, each
 * defined once: `{id: "evt_…", type, properties}`.
 */
const registry = new Map<string, z.ZodObject>()
function define<const T extends string, P extends z.ZodRawShape>(type: T, properties: P) {
  const schema = z.object({ id: z.string(), type: z.literal(type), properties: z.object(properties) })
  registry.set(type, schema)
  return schema
}

const sessionID = z.string()

export const OpencodeEvents = {
  'server.connected': define('server.connected', {}),
  'server.heartbeat': define('server.heartbeat', {}),
  'session.created': define('session.created', { sessionID, info: SessionInfo }),
  'session.updated': define('session.updated', { sessionID, info: SessionInfo }),
  'session.deleted': define('session.deleted', { sessionID, info: SessionInfo }),
  'session.status': define('session.status', { sessionID, status: SessionStatus }),
  'session.idle': define('session.idle', { sessionID }),
  'session.error': define('session.error', { sessionID, error: NamedError }),
  'message.updated': define('message.updated', { sessionID, info: Message }),
  'message.part.updated': define('message.part.updated', { sessionID, part: Part, time: z.number() }),
  'message.part.delta': define('message.part.delta', {
    sessionID,
    messageID: z.string(),
    partID: z.string(),
    field: z.literal('text'),
    delta: z.string(),
  }),
  // Steering (contract/steering.ts): a request keeps the service's id, the answer names it as requestID.
  'permission.asked': define('permission.asked', Permission.shape),
  'permission.replied': define('permission.replied', { sessionID, requestID: z.string(), reply: PermissionReply }),
  'question.asked': define('question.asked', Question.shape),
  'question.replied': define('question.replied', { sessionID, requestID: z.string(), answers: z.array(z.array(z.string())) }),
  'question.rejected': define('question.rejected', { sessionID, requestID: z.string() }),
}

export type OpencodeEventType = keyof typeof OpencodeEvents
export type OpencodeEventOf<T extends OpencodeEventType> = z.output<(typeof OpencodeEvents)[T]>
export type OpencodeEvent = { [T in OpencodeEventType]: OpencodeEventOf<T> }[OpencodeEventType]

export const OpencodeEventSchema = z.discriminatedUnion(
  'type',
  Object.values(OpencodeEvents) as unknown as [(typeof OpencodeEvents)[OpencodeEventType], ...(typeof OpencodeEvents)[OpencodeEventType][]],
)

/** A /global/event frame: the event with the directory and project it belongs to (absent for server events). */
export const GlobalEnvelope = z.object({
  directory: z.string().optional(),
  project: z.string().optional(),
  payload: OpencodeEventSchema,
})
export type GlobalEnvelope = z.output<typeof GlobalEnvelope>

export function isOpencodeEventType(type: string): type is OpencodeEventType {
  return registry.has(type)
}
