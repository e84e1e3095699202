import { z } from 'zod'
import { DurationField, SizeField } from '../../config/fields.ts'

/** The `limits` section: what one gateway accepts before it answers 413, 429 or 503. */
export const LimitsConfigSchema = z.strictObject({
  /** Largest HTTP request body (413 PAYLOAD_TOO_LARGE). The chat callback keeps its own 256 KiB. */
  max_body: SizeField('1MiB'),
  /** Largest WebSocket frame read: a bigger one gets a PAYLOAD_TOO_LARGE error event, the connection stays open. */
  max_frame: SizeField('1MiB'),
  /** Sessions with a turn running or queued through this gateway at once (503 OVERLOADED); 0 = no gateway limit. */
  max_active_sessions: z.number().int().min(0).default(0),
  /** Requests per second per API key (per client address without keys); 0 = no rate limit. */
  rate: z.number().min(0).default(0),
  /** Requests a key may make at once before the rate applies (token bucket size). */
  burst: z.number().int().min(1).default(50),
  /** `Retry-After` sent with 503 answers (OVERLOADED, SHUTTING_DOWN, RUNNER_UNAVAILABLE). */
  retry_after: DurationField('5s'),
  /**
   * Bytes a WebSocket connection may have waiting to be sent (`ws` bufferedAmount) before it is closed
   * with 1013: a client that stops reading costs at most this much, not the whole turn.
   */
  ws_send_buffer: SizeField('8MiB', 64 * 1024),
  /** Connections open at once from one client address; one more is answered 429 TOO_MANY_CONNECTIONS and closed. 0 = no cap. */
  max_connections_per_ip: z.number().int().min(0).default(1024),
})

export type LimitsConfig = z.output<typeof LimitsConfigSchema>

/**
 * The `ws` library's own frame cap: frames up to this are read and answered
 * (an error event when over `max_frame`); a bigger one makes `ws` close the
 * connection with 1009, so no frame of any size is buffered whole.
 */
export function hardFrameLimit(maxFrame: number): number {
  return Math.max(maxFrame * 4, maxFrame + 64 * 1024)
}
