import { ServiceError } from '../../contract/mod.ts'

/**
 * The last sequence a client saw (contract/frames.ts `LastSeq`) in text (the WebSocket URL's `?last_seq=`, SSE's `Last-Event-ID`):
 * up to 15 digits, nothing else; absent is undefined. Anything else is a
 * BAD_REQUEST naming `what` was wrong, never silently a replay from the start. Pure.
 */
export function parseLastSeq(text: unknown, what: string): number | undefined {
  if (text === undefined) return undefined
  if (typeof text !== 'string' || !/^\d{1,15}$/.test(text)) throw new ServiceError('BAD_REQUEST', `${what} must be an event sequence number`)
  return Number(text)
}
