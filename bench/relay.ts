import { WsClient } from '../test/fixtures/ws-client.ts'

/** What one relay scenario measured. */
export interface RelayResult {
  scenario: string
  eventsPerSecond: number
  p50Ms: number
  p99Ms: number
  maxMs: number
}

/** Percentile of sorted values (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/**
 * Throughput: the fake CLI prints `burstLines` answer lines as fast as it can;
 * events/s is counted at the WebSocket client from the first answer to the last.
 * Latency: it prints `stampedLines` lines at `stampedRate` lines/s, each
 * stamped with its write time; the client takes the difference on receipt.
 */
export async function measureRelay(
  scenario: string,
  wsUrl: string,
  options: { burstLines: number; stampedLines: number; stampedRate: number },
): Promise<RelayResult> {
  const client = await WsClient.connect(wsUrl)
  try {
    // Warm-up: JIT, CLI start-up and the session's first process are not what is measured.
    await turn(client, 'warm', 'burst: 2000')

    let first = 0
    let last = 0
    let count = 0
    const onBurst = (data: Buffer) => {
      if (!data.toString().startsWith('{"event":"answer"')) return
      last = performance.now()
      if (count++ === 0) first = last
    }
    client.socket.on('message', onBurst)
    await turn(client, 'burst', `burst: ${options.burstLines}`, 120_000)
    client.socket.off('message', onBurst)
    if (count !== options.burstLines) throw new Error(`${scenario}: expected ${options.burstLines} answers, got ${count}`)

    const latencies: number[] = []
    const onStamped = (data: Buffer) => {
      const now = performance.timeOrigin + performance.now()
      const text = data.toString()
      const at = text.indexOf('"data":"t=')
      if (at >= 0) latencies.push(now - Number.parseFloat(text.slice(at + 10)))
    }
    client.socket.on('message', onStamped)
    await turn(client, 'stamped', `stamped: ${options.stampedLines} ${options.stampedRate}`, 120_000)
    client.socket.off('message', onStamped)
    if (latencies.length !== options.stampedLines) throw new Error(`${scenario}: expected ${options.stampedLines} stamped answers, got ${latencies.length}`)
    latencies.sort((a, b) => a - b)
    return {
      scenario,
      eventsPerSecond: Math.round((count - 1) / ((last - first) / 1000)),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1)!,
    }
  } finally {
    client.messages.length = 0
    await client.close()
  }
}

async function turn(client: WsClient, requestId: string, prompt: string, timeoutMs = 30_000): Promise<void> {
  // The client keeps every message; bursts are large, so drop what is not needed.
  client.messages.length = 0
  client.send({ type: 'execute', session_id: 'bench', prompt, request_id: requestId })
  const end = await client.next((msg) => msg.request_id === requestId && (msg.event === 'completed' || msg.event === 'error'), timeoutMs)
  if (end.event === 'error') throw new Error(`turn ${requestId} failed: ${JSON.stringify(end)}`)
}
