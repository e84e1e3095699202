import { describe, expect, it, vi } from 'vitest'
import { ReliablePublisher } from '../../state/reliable-publisher.ts'

/** A publish written as an async function, as the callback the publisher takes. */
const settled =
  <T>(publish: (item: T) => Promise<unknown>) =>
  (item: T, done: (error?: unknown) => void) =>
    void publish(item).then(() => done(), done)

describe('reliable publisher', () => {
  it('publisher - stores everything in order when nothing fails, at most `window` in flight', async () => {
    const stored: number[] = []
    let inFlight = 0
    let peak = 0
    const publisher = new ReliablePublisher<number>({
      window: 4,
      backoffMs: () => 1,
      publish: settled(async (n: number) => {
        peak = Math.max(peak, ++inFlight)
        // Answered on a later turn of the event loop, as a server's acknowledgement is: the window fills meanwhile.
        await new Promise((resolve) => setImmediate(resolve))
        inFlight--
        stored.push(n)
      }),
    })
    for (let n = 0; n < 50; n++) publisher.push(n)
    await publisher.flush()
    expect(stored.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, n) => n))
    expect(peak).toBe(4)
    expect(publisher.pending).toBe(0)
  })

  it('publisher - retries failed items until stored; flush waits for them', async () => {
    const stored = new Set<number>()
    let failures = 0
    let retries = 0
    const publisher = new ReliablePublisher<number>({
      window: 8,
      backoffMs: () => 5,
      onRetry: () => retries++,
      publish: settled(async (n: number) => {
        // An outage: the first 12 attempts fail.
        if (failures < 12) {
          failures++
          throw new Error('nats down')
        }
        stored.add(n)
      }),
    })
    for (let n = 0; n < 20; n++) publisher.push(n)
    await publisher.flush()
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n))
    expect(retries).toBeGreaterThan(0)
  })

  it('publisher - close drops what is not stored and releases flush', async () => {
    const failed = Promise.withResolvers<void>()
    const publisher = new ReliablePublisher<number>({
      window: 1,
      backoffMs: () => 60_000,
      onRetry: () => failed.resolve(),
      publish: settled(async () => Promise.reject(new Error('down'))),
    })
    publisher.push(1)
    const flushed = publisher.flush()
    // The first try failed: the item waits for a retry a minute away.
    await failed.promise
    expect(publisher.pending).toBe(1)
    publisher.close()
    await flushed
    expect(publisher.pending).toBe(0)
  })

  it('publisher - an item refused for good is dropped and reported at once; the others are stored, nothing waits', async () => {
    const stored: number[] = []
    const dropped: number[] = []
    let retries = 0
    const publisher = new ReliablePublisher<number>({
      window: 2,
      backoffMs: () => 60_000,
      onRetry: () => retries++,
      isPermanent: (err) => (err as Error).message === 'not allowed',
      onDrop: (n) => dropped.push(n),
      publish: settled(async (n: number) => {
        if (n === 3) throw new Error('not allowed')
        stored.push(n)
      }),
    })
    for (let n = 0; n < 6; n++) publisher.push(n)
    await publisher.flush()
    expect(stored).toEqual([0, 1, 2, 4, 5])
    expect(dropped).toEqual([3])
    expect(retries).toBe(0)
  })

  it('publisher - an item that became stale while it waited for a retry is dropped, not sent again', async () => {
    const sent: number[] = []
    const stale: number[] = []
    let publishable = true
    let failing = true
    const publisher = new ReliablePublisher<number>({
      window: 4,
      backoffMs: () => 10,
      isStale: () => !publishable,
      onStale: (n) => stale.push(n),
      publish: settled(async (n: number) => {
        sent.push(n)
        if (failing) throw new Error('no answer')
      }),
    })
    for (let n = 0; n < 3; n++) publisher.push(n)
    await vi.waitFor(() => expect(sent).toEqual([0, 1, 2]))
    // The publisher lost the right to send them (its lease) before the retry.
    publishable = false
    failing = false
    await publisher.flush()
    expect(sent).toEqual([0, 1, 2])
    expect(stale).toEqual([0, 1, 2])
    publishable = true
    publisher.push(9)
    await publisher.flush()
    expect(sent).toEqual([0, 1, 2, 9])
  })
})
