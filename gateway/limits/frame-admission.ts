import type { ErrorBody } from '../../contract/mod.ts'
import type { RateLimiter } from './rate-limiter.ts'

/** Decides whether a WebSocket frame is read: an error body refuses it (sent as an `error` event), undefined reads it. */
export type FrameAdmission = (bytes: number) => ErrorBody | undefined

/**
 * Frame admission for one connection: the size limit (`limits.max_frame`)
 * and the connection's share of its key's request rate (every frame is a
 * request). A refused frame is not parsed; the connection stays open.
 */
export function frameAdmission(options: { maxFrame: number; limiter: RateLimiter; key: string }): FrameAdmission {
  const { maxFrame, limiter, key } = options
  return (bytes) => {
    if (bytes > maxFrame) {
      return { code: 'PAYLOAD_TOO_LARGE', message: `the frame has ${bytes} bytes; the limit is ${maxFrame} (limits.max_frame)` }
    }
    try {
      limiter.take(key)
    } catch (err) {
      return { code: 'RATE_LIMITED', message: (err as Error).message }
    }
    return undefined
  }
}

/** Byte length of a frame as `ws` delivers it. */
export function frameBytes(data: Buffer | ArrayBuffer | Buffer[]): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0)
  return data.byteLength
}
