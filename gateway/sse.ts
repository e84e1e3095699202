import { PassThrough } from 'node:stream'
import type { FastifyReply } from 'fastify'

/**
 * The server-sent event streams of every surface: OpenCode's `/event` and
 * `/global/event`, and the native `/v1/sessions/{id}/events` and
 * `POST /v1/agent/chat` with `Accept: text/event-stream`.
 */

/** The heartbeat period of every stream (OpenCode's); proxies drop idle streams after about a minute. */
export const HEARTBEAT_MS = 10_000

/** Bytes a stream may hold for a client that does not read before it is cut off. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024

/** Headers of every event stream: no caching, no proxy buffering (nginx honours X-Accel-Buffering). */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const

/** One SSE frame as OpenCode writes them: a single `data:` line with the JSON, then a blank line. */
export function sseFrame(data: unknown): string {
  return jsonFrame(JSON.stringify(data))
}

/** A frame of JSON text already serialized; with `id`, an `id:` line first (what Last-Event-ID resumes from). */
export function jsonFrame(json: string, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}data: ${json}\n\n`
}

export interface SseStream {
  /** Writes one frame; false once the stream is closed. */
  send(data: unknown): boolean
  /** Writes one frame of JSON text already serialized, with an optional event id. */
  sendJson(json: string, id?: string): boolean
  /** Writes a comment line, which every SSE parser skips: a keep-alive that is no event. */
  comment(text: string): boolean
  /** Ends the response. */
  close(): void
  readonly closed: boolean
  /** Resolves when the stream ends, by either side. */
  readonly done: Promise<void>
}

export interface SseOptions {
  /** Every `heartbeatMs`, `heartbeat` is called with the stream to write something; 0 turns it off. */
  heartbeatMs: number
  heartbeat: (stream: SseStream) => void
}

/**
 * The event streams a gateway has open, so that shutting down can end them
 * (an open stream would hold the HTTP server's close forever).
 */
export class SseStreams {
  readonly #open = new Set<SseStream>()

  /**
   * Answers the request with an event stream. The reply goes through
   * fastify's normal send path, so hooks (auth, CORS) see it like any other.
   */
  open(reply: FastifyReply, options: SseOptions): SseStream {
    const body = new PassThrough()
    const finished = Promise.withResolvers<void>()
    let closed = false
    let timer: NodeJS.Timeout | undefined
    const streams = this.#open
    const end = (graceful: boolean) => {
      if (closed) return
      closed = true
      clearInterval(timer)
      streams.delete(stream)
      if (graceful) body.end()
      else {
        body.destroy()
        reply.raw.destroy()
      }
      finished.resolve()
    }
    const write = (text: string) => {
      if (closed) return false
      body.write(text)
      // A client that stopped reading is cut off rather than buffered for without end;
      // it can reconnect and read the messages it missed.
      if (body.writableLength + body.readableLength > MAX_BACKLOG_BYTES) end(false)
      return !closed
    }
    const stream: SseStream = {
      send: (data) => write(sseFrame(data)),
      sendJson: (json, id) => write(jsonFrame(json, id)),
      comment: (text) => write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`),
      close: () => end(true),
      get closed() {
        return closed
      },
      done: finished.promise,
    }
    this.#open.add(stream)
    if (options.heartbeatMs > 0) {
      timer = setInterval(() => options.heartbeat(stream), options.heartbeatMs)
      timer.unref()
    }
    // The response's close: the client went away, or the stream ended. (The request's
    // 'close' fires as soon as its body is read, so it says nothing here.)
    reply.raw.once('close', () => end(true))
    body.once('error', () => end(false))
    void reply.headers(SSE_HEADERS).send(body)
    return stream
  }

  closeAll(): void {
    for (const stream of [...this.#open]) stream.close()
  }

  get size(): number {
    return this.#open.size
  }
}
