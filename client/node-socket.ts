import WebSocket from 'ws'
import { isErrorCode } from '../contract/errors.ts'
import { parseRetryAfter } from '../contract/retry-after.ts'
import { HandshakeError, type OpenSocket } from './transport.ts'

/**
 * Node's socket (the `ws` package): the key goes in the `X-API-Key` header
 * (not the URL, which proxies log), and a refused handshake is read, so the
 * client knows its code (RATE_LIMITED, SHUTTING_DOWN…) and its Retry-After.
 */
export const openNodeSocket: OpenSocket = (url, apiKey, handlers) =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url, apiKey === undefined ? {} : { headers: { 'x-api-key': apiKey } })
    let opened = false
    socket.on('unexpected-response', (_request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk.slice(0, 4096 - body.length)))
      response.on('end', () => {
        const status = response.statusCode ?? 0
        const code = errorCodeIn(body)
        const retryAfterMs = parseRetryAfter(response.headers['retry-after'], Date.now())
        reject(
          new HandshakeError(`the service refused the connection: ${status}${code ? ` ${code}` : ''} ${messageIn(body)}`.trim(), {
            code,
            status,
            retryAfterMs,
          }),
        )
        socket.terminate()
      })
    })
    socket.on('error', (err) => {
      if (!opened) reject(new HandshakeError(`cannot connect to ${url}: ${err.message}`, { cause: err }))
    })
    socket.on('open', () => {
      opened = true
      resolve({ send: (text) => socket.send(text), close: () => socket.close() })
    })
    socket.on('message', (data) => handlers.message(data.toString()))
    socket.on('close', (code, reason) => {
      if (opened) handlers.closed(code, reason.toString())
    })
  })

function parsed(body: string): { code?: unknown; message?: unknown } | undefined {
  try {
    const value = JSON.parse(body) as unknown
    return typeof value === 'object' && value !== null ? (value as { code?: unknown; message?: unknown }) : undefined
  } catch {
    return undefined
  }
}

function errorCodeIn(body: string) {
  const code = parsed(body)?.code
  return isErrorCode(code) ? code : undefined
}

function messageIn(body: string): string {
  const message = parsed(body)?.message
  return typeof message === 'string' ? `(${message})` : ''
}
