import { afterEach, describe, expect, it } from 'vitest'
import { connect, type AgentClient, type ConnectionStatus, type ServiceEvent } from '../../client/mod.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { startTcpProxy, type TcpProxy } from '../fixtures/tcp-proxy.ts'

let stack: Stack | undefined
let proxy: TcpProxy | undefined
const clients: AgentClient[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.close()
  await proxy?.close()
  await stack?.close()
  stack = proxy = undefined
})

async function open(url: string, options: Parameters<typeof connect>[0] extends infer O ? Partial<O> : never = {}): Promise<AgentClient> {
  const client = await connect({ url, ...options })
  clients.push(client)
  return client
}

/** Live-only events (answer_delta, thinking_delta) are never replayed; the stored ones are compared. */
const stored = (events: ServiceEvent[]) => events.filter((event) => !event.event.endsWith('_delta'))

async function collect(events: AsyncIterable<ServiceEvent>): Promise<ServiceEvent[]> {
  const all: ServiceEvent[] = []
  for await (const event of events) all.push(event)
  return all
}

describe('client - against the service', () => {
  it('client - execute yields the typed events of one turn, ending with completed; stats and version answer', async () => {
    stack = await startStack()
    const client = await open(stack.url)
    const session = client.session('s1')
    const events = await collect(session.execute('tool: echo hi', { workDir: 'demo' }))
    expect(stored(events).map((event) => event.event)).toEqual(['thinking', 'answer', 'tool_use', 'tool_result', 'answer', 'session_stats', 'completed'])
    const result = events.find((event) => event.event === 'tool_result')
    expect(result?.event === 'tool_result' && result.data.trim()).toBe('hi')
    expect(events.every((event) => event.session_id === 's1')).toBe(true)
    const stats = await session.stats()
    expect(stats.turns).toBe(1)
    expect(stats.tool_calls).toBe(1)
    expect((await client.version()).version).toMatch(/Claude Code/)
  })

  it('client - stop ends a running turn with stopped', async () => {
    stack = await startStack()
    const client = await open(stack.url)
    const session = client.session()
    const seen: string[] = []
    for await (const event of session.execute('sleep: 30')) {
      seen.push(event.event)
      if (event.event === 'tool_use') await session.stop('enough')
    }
    expect(seen.at(-1)).toBe('stopped')
  })

  it('client - a connection dropped mid-turn: reconnects, and the turn is delivered whole, each event once, as the replay has it', async () => {
    stack = await startStack()
    const target = new URL(stack.url)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) })
    const statuses: ConnectionStatus['state'][] = []
    const client = await open(proxy.url, { retry: { baseMs: 50 }, onStatus: (status) => statuses.push(status.state) })
    const received: ServiceEvent[] = []
    for await (const event of client.session('drop').execute('stamped: 60 30')) {
      received.push(event)
      // Cut twice, mid-turn: the events in flight are lost on the wire.
      if (received.length === 10 || received.length === 30) proxy.dropAll()
    }
    expect(proxy.drops).toBeGreaterThanOrEqual(2)
    expect(statuses.filter((state) => state === 'dropped')).toHaveLength(proxy.drops / 2)
    expect(received.at(-1)?.event).toBe('completed')
    // The stored stream, read by a client that never dropped.
    const reader = await open(stack.url)
    const replay: ServiceEvent[] = []
    for await (const event of reader.session('drop').follow()) {
      replay.push(event)
      if (event.event === 'completed') break
    }
    const seqs = stored(received).map((event) => event.seq)
    expect(new Set(seqs).size).toBe(seqs.length)
    expect(seqs).toEqual(replay.map((event) => event.seq))
    expect(stored(received).map((event) => ('data' in event ? event.data : undefined))).toEqual(
      replay.map((event) => ('data' in event ? event.data : undefined)),
    )
  })

  it('client - OVERLOADED is retried with backoff until the service has room; out of tries, the refusal ends the turn', async () => {
    stack = await startStack({ limits: { max_active_sessions: 1 } })
    const client = await open(stack.url, { retry: { baseMs: 100, maxMs: 400 } })
    const first = collect(client.session('busy').execute('sleep: 1'))
    // Wait until the first turn runs, so the second one is refused at first.
    const follower = client.session('busy').follow()
    for await (const event of follower) if (event.event === 'tool_use') break
    const second = await collect(client.session('waits').execute('hello'))
    const firstEvents = await first
    expect(second.at(-1)?.event).toBe('completed')
    expect(second.some((event) => event.event === 'error')).toBe(false)
    expect((second.at(-1)?.ts ?? 0) >= (firstEvents.at(-1)?.ts ?? Infinity)).toBe(true)

    const impatient = await open(stack.url, { retry: { maxAttempts: 1 } })
    void collect(client.session('busy').execute('sleep: 1'))
    for await (const event of client.session('busy').follow()) if (event.event === 'tool_use') break
    const refused = await collect(impatient.session('refused').execute('hello'))
    expect(refused.map((event) => (event.event === 'error' ? event.error.code : event.event))).toEqual(['OVERLOADED'])
  })
})

describe('client - over the rate limit', () => {
  it('client - an execute frame refused with RATE_LIMITED (its request_id echoed) is sent again after the backoff and runs once', async () => {
    // The handshake takes one token and the first execute the other: the second execute is refused until the bucket refills.
    stack = await startStack({ limits: { rate: 1, burst: 2 } })
    const client = await open(stack.url, { retry: { baseMs: 300 } })
    const [first, second] = await Promise.all([collect(client.session('r1').execute('one')), collect(client.session('r2').execute('two'))])
    expect(first.at(-1)?.event).toBe('completed')
    expect(second.at(-1)?.event).toBe('completed')
    expect(
      stored(second)
        .filter((event) => event.event === 'answer')
        .map((event) => ('data' in event ? event.data : '')),
    ).toEqual(['Echo: two'])
  })
})
