import http from 'node:http'
import type net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocketServer } from 'ws'
import { connect, HandshakeError, type ConnectionStatus } from '../../client/mod.ts'

/** An in-process server whose handshakes answer the given refusals first (status, code, Retry-After), then open. */
async function refusingServer(refusals: { status: number; code: string; retryAfter?: string }[]) {
  const sockets = new WebSocketServer({ noServer: true })
  const server = http.createServer()
  server.on('upgrade', (request, socket: net.Socket, head) => {
    const refusal = refusals.shift()
    if (refusal === undefined) return sockets.handleUpgrade(request, socket, head, (ws) => ws.send(JSON.stringify({ type: 'server.connected' })))
    const body = JSON.stringify({ code: refusal.code, message: 'not now' })
    socket.end(
      `HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: application/json\r\n${refusal.retryAfter ? `retry-after: ${refusal.retryAfter}\r\n` : ''}content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  const close = () =>
    new Promise<void>((resolve) => {
      sockets.close()
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return { url: `http://127.0.0.1:${port}`, close }
}

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

describe('client - connecting to a service that says "not now"', () => {
  it('client - SHUTTING_DOWN and RATE_LIMITED handshakes are tried again, waiting at least their Retry-After', async () => {
    const server = await refusingServer([
      { status: 503, code: 'SHUTTING_DOWN', retryAfter: '1' },
      { status: 429, code: 'RATE_LIMITED' },
    ])
    close = server.close
    const statuses: ConnectionStatus[] = []
    const started = Date.now()
    const client = await connect({ url: server.url, retry: { baseMs: 10 }, onStatus: (status) => statuses.push(status) })
    client.close()
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
    expect(statuses.map((status) => (status.state === 'reconnecting' ? (status.error as HandshakeError).code : status.state))).toEqual([
      'SHUTTING_DOWN',
      'RATE_LIMITED',
      'open',
    ])
    expect(statuses[0]).toMatchObject({ delayMs: 1_000 })
  })

  it('client - a refused key is not tried again: connect rejects with UNAUTHORIZED', async () => {
    const server = await refusingServer([{ status: 401, code: 'UNAUTHORIZED' }])
    close = server.close
    const refused = await connect({ url: server.url, retry: { baseMs: 10 } }).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(HandshakeError)
    expect((refused as HandshakeError).code).toBe('UNAUTHORIZED')
    expect((refused as HandshakeError).status).toBe(401)
  })
})
