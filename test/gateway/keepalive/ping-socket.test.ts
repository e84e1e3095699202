import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'

describe('keepalive ping - over a real socket', () => {
  let gateway: GatewayUnderTest | undefined
  const sockets: WebSocket[] = []
  afterEach(async () => {
    for (const socket of sockets) socket.terminate()
    sockets.length = 0
    await gateway?.close()
    gateway = undefined
  })

  async function open(url: string, autoPong: boolean): Promise<WebSocket> {
    const socket = new WebSocket(url, { autoPong })
    sockets.push(socket)
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
    return socket
  }

  it('ping - a client that stops answering pings is cut off and its connection freed; a live one stays', async () => {
    gateway = await gatewayUnderTest({ pingIntervalMs: 400 })
    await gateway.listen()
    const live = await open(gateway.wsUrl, true)
    const silent = await open(gateway.wsUrl, false)
    let pings = 0
    live.on('ping', () => pings++)
    const closed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)))
    // Terminated, not closed politely: the client sees an abnormal closure.
    expect(await closed).toBe(1006)
    await expect.poll(() => gateway!.app.websocketServer.clients.size, { timeout: 5_000 }).toBe(1)
    expect(live.readyState).toBe(WebSocket.OPEN)
    expect(pings).toBeGreaterThanOrEqual(1)
  })
})
