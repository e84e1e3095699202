import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../../fixtures/stack.ts'
import { WsClient } from '../../../fixtures/ws-client.ts'

/** Events of the burst turn: far more bytes than the send buffer and the kernel's socket buffers hold. */
const PARTS = 60_000

let stack: Stack | undefined
const clients: WsClient[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) {
    socketOf(client).resume()
    client.socket.terminate()
  }
  await stack?.close()
  stack = undefined
})

function socketOf(client: WsClient): Socket {
  return (client.socket as unknown as { _socket: Socket })._socket
}

async function connect(url: string): Promise<WsClient> {
  const client = await WsClient.connect(url)
  clients.push(client)
  return client
}

describe('native websocket - a client that stops reading', () => {
  it('send buffer - is closed with 1013 naming limits.ws_send_buffer once its buffer is full; the turn goes on and last_seq resumes it', async () => {
    stack = await startStack({ limits: { ws_send_buffer: '256KiB' }, state: { events_per_session: 200_000 } })
    // A reading client follows the whole turn, to know when it has ended.
    const observer = await connect(stack.wsUrl)
    observer.send({ type: 'attach', session_id: 'slow', request_id: 'a' })

    const slow = await connect(stack.wsUrl)
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      slow.socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    )
    slow.send({ type: 'execute', session_id: 'slow', prompt: `burst: ${PARTS}`, request_id: 'x' })
    // The client stops reading: its kernel buffers fill, then the gateway's.
    socketOf(slow).pause()

    const completed = await observer.event('completed', 'slow', 60_000)
    socketOf(slow).resume()
    const close = await Promise.race([closed, new Promise<undefined>((resolve) => setTimeout(resolve, 10_000))])
    expect(close).toEqual({ code: 1013, reason: expect.stringContaining('limits.ws_send_buffer') })

    // Cut mid-turn: what it got is a prefix of the turn, in order.
    const got = slow.eventsOf('slow')
    const lastSeq = got.at(-1)!.seq as number
    expect(lastSeq).toBeLessThan(completed.seq as number)
    expect(got.some((event) => event.event === 'completed')).toBe(false)

    // The session went on; reconnecting with last_seq gets the rest, each event once. The rest is replayed
    // in one burst, more than the buffer holds, so a resuming client may be cut again: each time after
    // more of the turn, never for nothing.
    const events = [...got]
    let seq = lastSeq
    for (let reconnects = 1; !events.some((event) => event.event === 'completed'); reconnects++) {
      expect(reconnects).toBeLessThan(100)
      const resumed = await connect(`${stack.wsUrl}?session_id=slow&last_seq=${seq}`)
      const ended = new Promise<void>((resolve) => resumed.socket.once('close', () => resolve()))
      await Promise.race([resumed.event('completed', 'slow', 30_000), ended])
      const more = resumed.eventsOf('slow')
      expect(more.length).toBeGreaterThan(0)
      events.push(...more)
      seq = more.at(-1)!.seq as number
      resumed.socket.terminate()
    }
    expect(events.at(-1)).toMatchObject({ event: 'completed', seq: completed.seq })
    const texts = events.filter((event) => event.event === 'answer').map((event) => event.data)
    expect(texts).toHaveLength(PARTS)
    expect(texts[0]).toBe('part 1')
    expect(texts.at(-1)).toBe(`part ${PARTS}`)
    expect(new Set(texts).size).toBe(PARTS)
    const seqs = events.map((event) => event.seq as number)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)
  }, 60_000)

  it('send buffer - a client that reads keeps its connection through a turn larger than the buffer', async () => {
    stack = await startStack({ limits: { ws_send_buffer: '256KiB' } })
    const client = await connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'fast', prompt: 'burst: 20000', request_id: 'x' })
    await client.event('completed', 'fast', 30_000)
    expect(client.eventsOf('fast').filter((event) => event.event === 'answer')).toHaveLength(20_000)
    expect(client.socket.readyState).toBe(client.socket.OPEN)
  })
})
