import { HandshakeError, type OpenSocket } from './transport.ts'

/**
 * A browser's socket (the native WebSocket): it cannot send headers, so the
 * key goes in `?api_key=`; and it cannot read a refused handshake, so a
 * refusal has no code and the client backs off as for a dropped connection.
 */
export const openBrowserSocket: OpenSocket = (url, apiKey, handlers) =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    if (apiKey !== undefined) target.searchParams.set('api_key', apiKey)
    const socket = new WebSocket(target)
    let opened = false
    socket.addEventListener('open', () => {
      opened = true
      resolve({ send: (text) => socket.send(text), close: () => socket.close() })
    })
    socket.addEventListener('message', (message: MessageEvent) => {
      if (typeof message.data === 'string') handlers.message(message.data)
    })
    socket.addEventListener('close', (closed: CloseEvent) => {
      if (opened) handlers.closed(closed.code, closed.reason)
      else reject(new HandshakeError(`cannot connect to ${url} (a wrong API key, a browser origin the service does not allow, or the service is down)`))
    })
  })
