import { rm } from 'node:fs/promises'
import net from 'node:net'
import { isAllowed, targetKey, urlTarget, type NetTarget } from './net-allow.ts'

/** Longest request head the gate reads before it decides. */
const MAX_HEAD_BYTES = 16 * 1024
/** A client that sends no complete head in this long is cut off. */
const HEAD_TIMEOUT_MS = 10_000

export interface NetGateOptions {
  /** The proxy's unix socket (bound read-only into the session's sandbox with the tunnels'). */
  socketPath: string
  targets: readonly NetTarget[]
  /** One unix socket per loopback target: whatever connects there is relayed to that target as it is, no proxy protocol. */
  tunnels?: readonly { socketPath: string; target: NetTarget }[]
  /** Told about each refused connection (for the log). */
  onDenied?(target: string): void
}

/**
 * The host side of a sandbox's network with `engine.network: allowlist`. The
 * sandbox has no network of its own (only its private loopback); its ways
 * out are these unix sockets. The proxy socket speaks the HTTP proxy
 * protocol: `CONNECT host:port` (HTTPS) or an absolute-form
 * `GET http://host:port/...` (plain HTTP through a proxy); a target on the
 * allowlist is connected from the host and the bytes are relayed, anything
 * else gets 403 and nothing is connected. A tunnel socket stands for one
 * allowed loopback target (a model API on the host's loopback): the
 * in-sandbox forwarder listening at that address inside relays to it, so
 * the forwarder can be a plain byte pipe such as socat.
 */
export class NetGate {
  readonly #servers: { server: net.Server; socketPath: string }[] = []
  readonly #sockets = new Set<net.Socket>()

  private constructor() {}

  static async listen(options: NetGateOptions): Promise<NetGate> {
    const gate = new NetGate()
    try {
      await gate.#listen(options.socketPath, (client) => gate.#serve(client, options))
      for (const tunnel of options.tunnels ?? []) {
        await gate.#listen(tunnel.socketPath, (client) => {
          gate.#track(client)
          gate.#relay(client, tunnel.target, false, Buffer.alloc(0))
        })
      }
    } catch (err) {
      await gate.close()
      throw err
    }
    return gate
  }

  /** Stops listening and cuts every relayed connection. */
  async close(): Promise<void> {
    const closed = this.#servers.map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve())))
    for (const socket of this.#sockets) socket.destroy()
    await Promise.all(closed)
    await Promise.all(this.#servers.map(({ socketPath }) => rm(socketPath, { force: true })))
  }

  async #listen(socketPath: string, onConnection: (client: net.Socket) => void): Promise<void> {
    const server = net.createServer(onConnection)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socketPath, () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.#servers.push({ server, socketPath })
  }

  #serve(client: net.Socket, options: NetGateOptions): void {
    this.#track(client)
    client.setTimeout(HEAD_TIMEOUT_MS, () => client.destroy())
    let head = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) refuse(client, 431, 'request head too large')
        return
      }
      client.off('data', onData)
      client.setTimeout(0)
      const request = parseRequestLine(head.subarray(0, head.indexOf('\r\n')).toString('latin1'))
      if (!request) return refuse(client, 400, 'the sandbox network gate speaks the HTTP proxy protocol (CONNECT host:port)')
      if (!isAllowed(options.targets, request.target.host, request.target.port)) {
        options.onDenied?.(targetKey(request.target))
        return refuse(client, 403, `${targetKey(request.target)} is not on the sandbox's network allowlist (engine.network_allow)`)
      }
      // CONNECT: the bytes after the head are the tunnel's; absolute-form: the whole request goes on as it is.
      const rest = request.connect ? head.subarray(end + 4) : head
      this.#relay(client, request.target, request.connect, rest)
    }
    client.on('data', onData)
    client.on('error', () => client.destroy())
  }

  #relay(client: net.Socket, target: NetTarget, connect: boolean, rest: Buffer): void {
    client.pause()
    const upstream = net.connect({ host: target.host, port: target.port })
    this.#track(upstream)
    upstream.once('connect', () => {
      if (connect) client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (rest.length > 0) upstream.write(rest)
      client.pipe(upstream)
      upstream.pipe(client)
      client.resume()
    })
    upstream.on('error', () => {
      if (connect && upstream.connecting) refuse(client, 502, `cannot connect to ${targetKey(target)}`)
      else client.destroy()
    })
    client.on('error', () => upstream.destroy())
    // A side that closes cleanly lets the other finish writing what it has (pipe ends it); a failure cuts both.
    client.on('close', (hadError) => (hadError ? upstream.destroy() : upstream.end()))
    upstream.on('close', (hadError) => (hadError ? client.destroy() : client.end()))
  }

  #track(socket: net.Socket): void {
    this.#sockets.add(socket)
    socket.on('close', () => this.#sockets.delete(socket))
  }
}

/** `CONNECT host:port HTTP/1.1` or `METHOD http://host[:port]/path HTTP/1.1`. */
export function parseRequestLine(line: string): { target: NetTarget; connect: boolean } | undefined {
  const parts = line.split(' ')
  if (parts.length !== 3 || !/^HTTP\/1\.[01]$/.test(parts[2]!)) return undefined
  const [method, uri] = parts as [string, string, string]
  if (method === 'CONNECT') {
    const target = urlTarget(`http://${uri}`)
    // An authority without a port is not a CONNECT target.
    return target && /:\d+$/.test(uri) ? { target, connect: true } : undefined
  }
  if (!/^http:\/\//i.test(uri)) return undefined
  const target = urlTarget(uri)
  return target ? { target, connect: false } : undefined
}

function refuse(client: net.Socket, status: number, message: string): void {
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway' }[status] ?? 'Error'
  const body = `agent-runtime sandbox: ${message}\n`
  client.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}
