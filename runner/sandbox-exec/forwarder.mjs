// @ts-check
/**
 * Runs INSIDE a session's sandbox with `engine.network: allowlist` and
 * `sandbox.forwarder: node` (or `auto` without socat), beside the agent CLI:
 * the sandbox's network namespace has only its own loopback, so this listens
 * there and pipes every connection to a unix socket of the runner's network
 * gate (runner/sandbox-exec/net-gate.ts) bound into the sandbox: the proxy's
 * for the port HTTPS_PROXY names, a tunnel's for a model API on the host's
 * loopback. It does what one `socat TCP-LISTEN:... UNIX-CONNECT:...` per
 * listener does; the launcher waits until every listener is up.
 *
 * Plain JavaScript with node builtins only, type-checked through JSDoc: every
 * session's start waits for it, and stripping TypeScript types would cost node
 * about 60 ms more at start. argv[2] is the JSON list of listeners.
 */
import net from 'node:net'

/** @type {{ host: string, port: number, socket: string }[]} */
const listeners = JSON.parse(process.argv[2] ?? '[]')

for (const listener of listeners) {
  const server = net.createServer((client) => {
    const upstream = net.createConnection(listener.socket)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    // A side that closes cleanly lets the other finish writing what it has; a failure cuts both.
    client.on('close', (hadError) => (hadError ? upstream.destroy() : upstream.end()))
    upstream.on('close', (hadError) => (hadError ? client.destroy() : client.end()))
    client.pipe(upstream)
    upstream.pipe(client)
  })
  server.on('error', (err) => {
    process.stderr.write(`agent-runtime sandbox forwarder: cannot listen on ${listener.host}:${listener.port}: ${err.message}\n`)
    process.exit(1)
  })
  server.listen(listener.port, listener.host)
}
