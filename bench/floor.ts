/**
 * The bare relay floor: the least any relay of a CLI to WebSocket clients can
 * do. One long-lived CLI per session, each stdout line parsed and sent as an
 * event; no bus, auth, metrics, validation, sequence or storage. Speaks the
 * native protocol's execute → answer… completed, so the same client drives it.
 *
 *   node bench/floor.ts <cli> [args…]   prints `listening <port>` (loopback)
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { WebSocketServer, type WebSocket } from 'ws'

const [command, ...baseArgs] = process.argv.slice(2)
const clis = new Map<string, { child: ChildProcess; client: WebSocket; requestId: unknown }>()
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })

server.on('connection', (client) => {
  client.on('message', (data) => {
    const { session_id: sessionId, prompt, request_id: requestId } = JSON.parse(data.toString())
    let cli = clis.get(sessionId)
    if (!cli) {
      const child = spawn(command!, [...baseArgs, '--print', '--verbose', '--input-format', 'stream-json', '--output-format', 'stream-json'], {
        stdio: ['pipe', 'pipe', 'ignore'],
      })
      const current = { child, client, requestId }
      clis.set(sessionId, (cli = current))
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const out = JSON.parse(line)
        const send = (event: object) => current.client.send(JSON.stringify({ ...event, session_id: sessionId, request_id: current.requestId }))
        if (out.type === 'assistant') for (const block of out.message.content) if (block.type === 'text') send({ event: 'answer', data: block.text })
        if (out.type === 'result') send({ event: 'completed', data: out.result })
      })
    }
    Object.assign(cli, { client, requestId })
    cli.child.stdin!.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: prompt }] } })}\n`)
  })
})
server.on('listening', () => console.log(`listening ${(server.address() as { port: number }).port}`))
process.on('SIGTERM', () => {
  for (const { child } of clis.values()) child.kill()
  process.exit(0)
})
