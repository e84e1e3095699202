import { z } from 'zod'

/**
 * Everything the adapter reads from or writes to the chat platform, declared
 * once (spec §2.9, §4.4): the callback body, the message as stored, the
 * access-token answer and the robot message bodies.
 */

/** Any callback: only `msgtype` is needed to decide whether it is processed. Unknown fields are kept. */
export const Callback = z.looseObject({
  msgtype: z.string(),
  conversationId: z.string().optional(),
  senderId: z.string().optional(),
  senderNick: z.string().optional(),
  isAdmin: z.boolean().optional(),
  robotCode: z.string().optional(),
  eventType: z.string().optional(),
})
export type Callback = z.output<typeof Callback>

/** A text callback: the one kind that starts work. robotCode may be missing; that is reported when replying. */
export const TextCallback = Callback.extend({
  msgtype: z.literal('text'),
  conversationId: z.string().min(1),
  senderId: z.string().min(1),
  text: z.looseObject({ content: z.string() }),
})
export type TextCallback = z.output<typeof TextCallback>

/** An incoming chat message as stored (spec §2.9 "Stored as"). */
export interface ChatMessage {
  /** senderId. */
  user_id: string
  /** text.content. */
  content: string
  metadata: {
    /** conversationId. */
    conversation_id: string
    /** robotCode; required when replying. */
    robot_code?: string | undefined
  }
  sender_nick?: string | undefined
}

/** The stored form of a text callback. */
export function toChatMessage(callback: TextCallback): ChatMessage {
  const robotCode = callback.robotCode?.trim()
  return {
    user_id: callback.senderId,
    content: callback.text.content,
    metadata: { conversation_id: callback.conversationId, ...(robotCode ? { robot_code: robotCode } : {}) },
    ...(callback.senderNick !== undefined && { sender_nick: callback.senderNick }),
  }
}

/** The adapter session key of a message (spec §3). */
export function sessionKey(message: ChatMessage): string {
  return `${message.metadata.conversation_id}:${message.user_id}`
}

/** Input of POST /v1.0/oauth2/oAuth2/accessToken. */
export const AccessTokenRequest = z.object({ appKey: z.string(), appSecret: z.string() })
export type AccessTokenRequest = z.output<typeof AccessTokenRequest>

/** Answer of the access-token call; `expireIn` in seconds (7200). */
export const AccessTokenResponse = z.object({ accessToken: z.string().min(1), expireIn: z.number().positive() })
export type AccessTokenResponse = z.output<typeof AccessTokenResponse>

/** Robot message bodies (spec §4.4), plus `userIds`: the one-to-one recipient. */
export const SendBody = z.discriminatedUnion('msgtype', [
  z.object({ msgtype: z.literal('text'), text: z.object({ content: z.string() }), userIds: z.array(z.string()) }),
  z.object({ msgtype: z.literal('markdown'), markdown: z.object({ title: z.string(), text: z.string() }), userIds: z.array(z.string()) }),
])
export type SendBody = z.output<typeof SendBody>

/** The body of one reply part. */
export function sendBody(format: 'text' | 'markdown', content: string, userId: string, title: string): SendBody {
  return format === 'markdown'
    ? { msgtype: 'markdown', markdown: { title, text: content }, userIds: [userId] }
    : { msgtype: 'text', text: { content }, userIds: [userId] }
}

/** Path of the access-token call. */
export const TOKEN_PATH = '/v1.0/oauth2/oAuth2/accessToken'
/** Path of one-to-one robot messages; `robotCode` goes in the query. */
export const BATCH_SEND_PATH = '/v1.0/robot/oToMessages/batchSend'
/** Header carrying the access token on outbound calls. */
export const TOKEN_HEADER = 'x-acs-chat-access-token'
