// Run by private-network.integration.test.ts: moves itself into a private
// network namespace, then reports what it sees there as one JSON line.
import { createConnection, createServer } from 'node:net'
import os from 'node:os'
import { onlyLoopback, rerunInPrivateNetwork } from '../../bench/private-network.ts'

if (!onlyLoopback()) {
  const rerun = rerunInPrivateNetwork()
  if ('reason' in rerun) throw new Error(rerun.reason)
  process.exit(rerun.exitCode)
}
// Listen as HotPlex does (every interface) and reach it over loopback.
const server = createServer((socket) => socket.end('hello'))
await new Promise<void>((resolve) => server.listen(0, resolve))
const { port } = server.address() as { port: number }
const reply = await new Promise<string>((resolve, reject) => {
  let text = ''
  createConnection(port, '127.0.0.1')
    .on('data', (chunk) => (text += chunk))
    .on('end', () => resolve(text))
    .on('error', reject)
})
server.close()
console.log(JSON.stringify({ interfaces: Object.keys(os.networkInterfaces()), reply }))
process.exitCode = 3
