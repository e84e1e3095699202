/**
 * Failures of the chat adapter's outbound side. They never reach an HTTP
 * client (the callback is acknowledged before the work runs); they are logged
 * with these stable codes and counted.
 */
export const ChatErrorCodes = {
  CHAT_TOKEN_FAILED: 'the access-token call failed or answered an unusable body',
  CHAT_SEND_FAILED: 'a robot message could not be sent, retries included',
  CHAT_ROBOT_CODE_MISSING: 'the incoming message carries no robotCode, so no reply can be addressed',
} as const

export type ChatErrorCode = keyof typeof ChatErrorCodes

/** An outbound failure with a stable code; `status` is the HTTP status when there was one. */
export class ChatError extends Error {
  override readonly name = 'ChatError'
  readonly code: ChatErrorCode
  readonly status: number | undefined
  /** True when trying again later may succeed (network, 429, 5xx). */
  readonly retryable: boolean

  constructor(code: ChatErrorCode, message: string, options: { status?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.status = options.status
    this.retryable = options.retryable ?? false
  }
}
