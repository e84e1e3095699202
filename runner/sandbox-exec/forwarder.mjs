// @ts-check
/**
 * Runs INSIDE a session's sandbox with `engine.network: allowlist`, beside
 * the agent CLI: the sandbox's network namespace has only its own loopback,
 * so this listens there and relays every connection to the runner's network
 * gate (runner/sandbox-exec/net-gate.ts) over the unix socket bound into the
 * sandbox. A listener with a `tunnel` stands in for a model API on the host's
 * loopback at the same address (it asks the gate to CONNECT there first); one
 * without is the proxy port that HTTPS_PROXY names (the client speaks the
 * proxy protocol itself). Once every listener is up it creates the `ready`
 * file, which the launcher waits for before it starts the CLI.
 *
 * Plain JavaScript with node builtins only, type-checked through JSDoc: every
 * session's start waits for it, and stripping TypeScript types would cost node
 * about 60 ms more at start (measured: ~40 ms to ready as .mjs, ~100 ms as .ts).
 * argv[2] is the JSON spec.
 */
import { writeFileSync } from 'node:fs'
import net from 'node:net'

/**
 * @typedef {object} Listener
 * @property {string} host
 * @property {number} port
 * @property {string} [tunnel] `host:port` to CONNECT to through the gate; none: relay the bytes as they come.
 */

/** @type {{ gate: string, ready: string, listeners: Listener[] }} */
const spec = JSON.parse(process.argv[2] ?? '{}')

/**
 * @param {net.Socket} client
 * @param {Listener} listener
 */
function relay(client, listener) {
  const upstream = net.createConnection(spec.gate)
  client.on('error', () => upstream.destroy())
  upstream.on('error', () => client.destroy())
  // A side that closes cleanly lets the other finish writing what it has; a failure cuts both.
  client.on('close', (hadError) => (hadError ? upstream.destroy() : upstream.end()))
  upstream.on('close', (hadError) => (hadError ? client.destroy() : client.end()))
  if (listener.tunnel === undefined) {
    client.pipe(upstream)
    upstream.pipe(client)
    return
  }
  client.pause()
  upstream.write(`CONNECT ${listener.tunnel} HTTP/1.1\r\nHost: ${listener.tunnel}\r\n\r\n`)
  let head = Buffer.alloc(0)
  /** @param {Buffer} chunk */
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    if (end < 0) return
    upstream.off('data', onData)
    if (!/^HTTP\/1\.[01] 200/.test(head.toString('latin1', 0, 16))) return void client.destroy()
    const rest = head.subarray(end + 4)
    if (rest.length > 0) client.write(rest)
    client.pipe(upstream)
    upstream.pipe(client)
    client.resume()
  }
  upstream.on('data', onData)
}

let waiting = spec.listeners.length
for (const listener of spec.listeners) {
  const server = net.createServer((client) => relay(client, listener))
  server.on('error', (err) => {
    process.stderr.write(`agent-runtime sandbox forwarder: cannot listen on ${listener.host}:${listener.port}: ${err.message}\n`)
    process.exit(1)
  })
  server.listen(listener.port, listener.host, () => {
    if (--waiting === 0) writeFileSync(spec.ready, '')
  })
}
