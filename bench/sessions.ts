import { WsClient } from '../test/fixtures/ws-client.ts'

/**
 * Sessions started per second: `count` new sessions, one turn each, sent at
 * once over `connections` WebSockets; counted from the first execute to the
 * last `completed` (placement, claim, CLI start, turn).
 */
export async function measureSessionStarts(wsUrl: string, count: number, connections: number, label: string): Promise<number> {
  const clients = await Promise.all(Array.from({ length: connections }, () => WsClient.connect(wsUrl)))
  try {
    const started = performance.now()
    const done = Array.from({ length: count }, (_, i) => {
      const client = clients[i % connections]!
      const sessionId = `${label}-start-${i}`
      client.send({ type: 'execute', session_id: sessionId, prompt: 'hello', request_id: sessionId })
      return client.next((msg) => msg.request_id === sessionId && (msg.event === 'completed' || msg.event === 'error'), 120_000)
    })
    const ends = await Promise.all(done)
    const failed = ends.filter((msg) => msg.event === 'error')
    if (failed.length > 0) throw new Error(`${failed.length} sessions failed, e.g. ${JSON.stringify(failed[0])}`)
    return Math.round(count / ((performance.now() - started) / 1000))
  } finally {
    await Promise.all(clients.map((client) => client.close()))
  }
}

/**
 * Replay: a session with `events` stored answer events; a client resuming
 * from sequence 0 reads them all back. Events/s from the attach to the last one.
 */
export async function measureReplay(wsUrl: string, events: number): Promise<number> {
  const writer = await WsClient.connect(wsUrl)
  try {
    writer.send({ type: 'execute', session_id: 'replay', prompt: `burst: ${events}`, request_id: 'fill' })
    await writer.next((msg) => msg.request_id === 'fill' && msg.event === 'completed', 120_000)
  } finally {
    writer.messages.length = 0
    await writer.close()
  }
  let received = 0
  const started = performance.now()
  const reader = await WsClient.connect(`${wsUrl}?session_id=replay&last_seq=0`)
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`replay: ${received} of ${events} events arrived within 60 s`)), 60_000)
      reader.socket.on('message', (data: Buffer) => {
        if (data.toString().startsWith('{"event":"answer"') && ++received === events) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    return Math.round(events / ((performance.now() - started) / 1000))
  } finally {
    reader.messages.length = 0
    await reader.close()
  }
}
