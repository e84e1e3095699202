import type { ErrorCode } from '../contract/errors.ts'

/**
 * What the client needs from a WebSocket, so that one client runs in Node
 * (the `ws` package: headers, and the handshake's refusal readable) and in a
 * browser (the native WebSocket: the key in the URL, a refusal unreadable).
 */
export interface Socket {
  send(text: string): void
  /** Closes from this side; the `closed` handler still runs. */
  close(): void
}

export interface SocketHandlers {
  message(text: string): void
  /** The connection ended, from either side (code 1006: it dropped). */
  closed(code: number, reason: string): void
}

/** Opens a socket to `url` presenting `apiKey`; rejects with a HandshakeError when the server refuses it or cannot be reached. */
export type OpenSocket = (url: string, apiKey: string | undefined, handlers: SocketHandlers) => Promise<Socket>

/**
 * A connection the server refused or that could not be made. `code` is the
 * service's error code when its answer said one (a Node client reads it; a
 * browser cannot), `retryAfterMs` the answer's Retry-After.
 */
export class HandshakeError extends Error {
  override readonly name = 'HandshakeError'
  readonly code: ErrorCode | undefined
  readonly status: number | undefined
  readonly retryAfterMs: number | undefined
  constructor(
    message: string,
    details: { code?: ErrorCode | undefined; status?: number | undefined; retryAfterMs?: number | undefined; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause })
    this.code = details.code
    this.status = details.status
    this.retryAfterMs = details.retryAfterMs
  }
}

/** The native WebSocket route below a service address: `http://h:8080` becomes `ws://h:8080/ws/v1/agent`; a ws(s) URL with a path is kept. */
export function webSocketUrl(address: string): string {
  let url: URL
  try {
    url = new URL(address)
  } catch (err) {
    throw new TypeError(`"${address}" is not a URL: give the service's address, e.g. http://127.0.0.1:8080`, { cause: err })
  }
  if (url.protocol === 'http:') url.protocol = 'ws:'
  else if (url.protocol === 'https:') url.protocol = 'wss:'
  else if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new TypeError(`"${address}": the service's address starts with http://, https://, ws:// or wss://`)
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/ws/v1/agent'
  return url.toString()
}
