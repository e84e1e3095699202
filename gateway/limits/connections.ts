import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { STATUS_CODES } from 'node:http'
import { ServiceError } from '../../contract/mod.ts'

/** How long a refused connection may take to read its answer and close before it is cut. */
const REFUSED_LINGER_MS = 1_000

/**
 * Caps the connections open at once from one client address (the socket's
 * peer address: behind a proxy that does not keep client addresses, every
 * client shares the proxy's). A connection over the cap never reaches the HTTP
 * parser: it is answered 429 TOO_MANY_CONNECTIONS with `Connection: close` and
 * closed, so one client cannot take every file descriptor of the process.
 * `max` 0 turns the cap off. Call before the server listens.
 */
export function capConnectionsPerAddress(server: Server, max: number, onRefused?: (address: string, open: number) => void): void {
  if (max <= 0) return
  const open = new Map<string, number>()
  // The HTTP server's own listeners (its parser) run only for the connections let in.
  const listeners = server.listeners('connection') as ((socket: Socket) => void)[]
  server.removeAllListeners('connection')
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown'
    const count = open.get(address) ?? 0
    if (count >= max) {
      onRefused?.(address, count)
      refuse(socket, max)
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
    for (const listener of listeners) listener.call(server, socket)
  })
}

function refuse(socket: Socket, max: number): void {
  const failure = new ServiceError(
    'TOO_MANY_CONNECTIONS',
    `this client address has ${max} connections open (limits.max_connections_per_ip); close or reuse some and retry`,
  )
  const body = JSON.stringify(failure.toBody())
  socket.on('error', () => {})
  // Whatever the client sends is read and dropped: closing with unread bytes would reset the connection,
  // and the client could lose the answer.
  socket.resume()
  socket.setTimeout(REFUSED_LINGER_MS, () => socket.destroy())
  socket.once('end', () => socket.destroy())
  socket.end(
    `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
}
