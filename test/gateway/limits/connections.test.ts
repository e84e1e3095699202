import net from 'node:net'
import pino from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryBus } from '../../../bus/mod.ts'
import { AuthConfigSchema } from '../../../gateway/auth/config.ts'
import { LimitsConfigSchema } from '../../../gateway/limits/config.ts'
import { buildGateway } from '../../../gateway/server.ts'
import { gatewayUnderTest, type GatewayOverrides, type GatewayUnderTest } from '../../fixtures/gateway.ts'

/** How long a test waits for the server to close a socket before it counts as left open. */
const CLOSE_WAIT_MS = 5_000

/** A raw TCP client on loopback: what it received, and whether the server closed the connection. */
interface RawClient {
  socket: net.Socket
  text(): string
  /** Resolves true when the server ends or resets the connection, false when it is still open after `CLOSE_WAIT_MS`. */
  closed(): Promise<boolean>
}

async function connect(url: string): Promise<RawClient> {
  const { port } = new URL(url)
  const socket = net.connect({ host: '127.0.0.1', port: Number(port) })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let received = ''
  const ended = Promise.withResolvers<void>()
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
  socket.on('error', () => ended.resolve())
  socket.on('end', () => ended.resolve())
  socket.on('close', () => ended.resolve())
  return {
    socket,
    text: () => received,
    closed: () => Promise.race([ended.promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLOSE_WAIT_MS))]),
  }
}

/** Writes one byte of body every 50 ms until stopped, as a client trickling a large body would. */
function trickle(socket: net.Socket): () => void {
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) socket.write('x')
  }, 50)
  return () => clearInterval(timer)
}

const postHead = (path: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n${extra}\r\n{"message":"`

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`

let gateway: GatewayUnderTest | undefined
const sockets: net.Socket[] = []
const stops: (() => void)[] = []
afterEach(async () => {
  stops.splice(0).forEach((stop) => stop())
  sockets.splice(0).forEach((socket) => socket.destroy())
  await gateway?.close()
  gateway = undefined
})

async function start(overrides: GatewayOverrides): Promise<GatewayUnderTest> {
  gateway = await gatewayUnderTest(overrides)
  gateway.app.get('/health', async () => ({ status: 'healthy' }))
  await gateway.listen()
  return gateway
}

async function open(url: string): Promise<RawClient> {
  const client = await connect(url)
  sockets.push(client.socket)
  return client
}

describe('connections - refused requests are closed', () => {
  it.each([
    ['401 UNAUTHORIZED (no key)', { auth: { api_key: 'the-key-1234' } }, '', 401],
    ['403 FORBIDDEN_ORIGIN', { auth: { api_key: 'the-key-1234' } }, 'Origin: https://evil.example\r\nX-API-Key: the-key-1234\r\n', 403],
  ])('refused - %s is answered with Connection: close and the socket closed while the body still trickles in', async (_name, overrides, headers, status) => {
    const { url } = await start(overrides)
    const client = await open(url)
    client.socket.write(postHead('/v1/agent/chat', headers))
    stops.push(trickle(client.socket))
    expect(await client.closed()).toBe(true)
    expect(client.text()).toMatch(new RegExp(`^HTTP/1.1 ${status} `))
    expect(client.text()).toMatch(/\r\nconnection: close\r\n/i)
  })

  it('refused - an OpenCode route (its own error shape) closes too', async () => {
    const { url } = await start({ auth: { api_key: 'the-key-1234' } })
    const client = await open(url)
    client.socket.write(postHead('/session'))
    stops.push(trickle(client.socket))
    expect(await client.closed()).toBe(true)
    expect(client.text()).toMatch(/^HTTP\/1.1 401 /)
  })
})

describe('connections - a cap per client address', () => {
  it('cap - connection N+1 of one address is refused with 429 TOO_MANY_CONNECTIONS; once one closes, a new one is served', async () => {
    const { url } = await start({ limits: { max_connections_per_ip: 3 } })
    const held: RawClient[] = []
    for (let i = 0; i < 3; i++) {
      const client = await open(url)
      // A full request and its answer: the server has counted this connection, which stays open (keep-alive).
      client.socket.write(get('/health'))
      await vi.waitFor(() => expect(client.text()).toMatch(/^HTTP\/1.1 200 [\s\S]*healthy/), { timeout: CLOSE_WAIT_MS })
      held.push(client)
    }
    const refused = await open(url)
    refused.socket.write(get('/health'))
    expect(await refused.closed()).toBe(true)
    expect(refused.text()).toMatch(/^HTTP\/1.1 429 /)
    expect(refused.text()).toMatch(/\r\nconnection: close\r\n/i)
    const body = JSON.parse(refused.text().slice(refused.text().indexOf('\r\n\r\n') + 4)) as { code: string; message: string }
    expect(body).toEqual({ code: 'TOO_MANY_CONNECTIONS', message: expect.stringContaining('limits.max_connections_per_ip') })
    // The held ones still work.
    held[0]!.socket.write(get('/health'))
    await vi.waitFor(() => expect(held[0]!.text().match(/HTTP\/1.1 200/g)).toHaveLength(2), { timeout: CLOSE_WAIT_MS })

    held[1]!.socket.destroy()
    await vi.waitFor(
      async () => {
        const again = await open(url)
        again.socket.write(get('/health'))
        await vi.waitFor(() => expect(again.text()).toMatch(/^HTTP\/1.1 \d{3} /), { timeout: CLOSE_WAIT_MS })
        expect(again.text()).toMatch(/^HTTP\/1.1 200 /)
      },
      { timeout: CLOSE_WAIT_MS, interval: 50 },
    )
  })

  it('cap - 0 turns the cap off', async () => {
    const { url } = await start({ limits: { max_connections_per_ip: 0 } })
    const clients = await Promise.all(Array.from({ length: 20 }, () => open(url)))
    for (const client of clients) client.socket.write(get('/health'))
    for (const client of clients) await vi.waitFor(() => expect(client.text()).toMatch(/^HTTP\/1.1 200 /), { timeout: CLOSE_WAIT_MS })
  })
})

describe('connections - request timeouts', () => {
  it('timeout - a body that does not arrive in full within server.request_timeout is 408 REQUEST_TIMEOUT and the socket is closed', async () => {
    const log = pino({ level: 'silent' })
    const bus = new MemoryBus({ logger: log })
    const app = await buildGateway({
      bus,
      subjectPrefix: 'test',
      requestTimeoutMs: 2_000,
      log,
      security: {
        auth: AuthConfigSchema.parse({}),
        limits: LimitsConfigSchema.parse({}),
        pingIntervalMs: 0,
        taskPulseMs: 0,
        http: { requestTimeoutMs: 1_000, headersTimeoutMs: 500 },
      },
    })
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      const client = await open(url)
      // An accepted request (no keys configured) whose body never completes.
      client.socket.write(postHead('/v1/agent/chat'))
      stops.push(trickle(client.socket))
      expect(await client.closed()).toBe(true)
      expect(client.text()).toMatch(/^HTTP\/1.1 408 /)
      expect(client.text()).toContain('"code":"REQUEST_TIMEOUT"')
    } finally {
      await app.close()
      await bus.close()
    }
  })
})
