import { describe, expect, it, vi } from 'vitest'
import type { ServiceEvent } from '../../contract/mod.ts'
import { Follower } from '../../gateway/follower.ts'

const ev = (seq: number): ServiceEvent => ({ event: 'answer', data: `e${seq}`, session_id: 's', seq })

function follower(options: { afterSeq?: number; stored?: number[]; giveUpMs?: number } = {}) {
  const delivered: number[] = []
  const skipped: [number, number][] = []
  let stored = options.stored ?? []
  /** Times the log was read. */
  const reads = { count: 0 }
  const f = new Follower({
    listener: (event) => delivered.push(event.seq!),
    afterSeq: options.afterSeq,
    read: async (after) => {
      reads.count++
      return stored.filter((seq) => seq > after).map((seq) => ({ event: ev(seq), json: JSON.stringify(ev(seq)) }))
    },
    retryMs: 10,
    giveUpMs: options.giveUpMs ?? 60_000,
    onSkip: (from, to) => skipped.push([from, to]),
    onReadError: () => {},
  })
  return { f, delivered, skipped, reads, store: (seqs: number[]) => (stored = seqs) }
}

describe('follower', () => {
  it.each([
    ['in order', [1, 2, 3], [1, 2, 3]],
    ['duplicates dropped', [1, 2, 2, 3, 1], [1, 2, 3]],
    ['starts at the first live event', [5, 6, 7], [5, 6, 7]],
    ['a late event fills its gap', [1, 3, 2, 4], [1, 2, 3, 4]],
  ])('live - %s', (_name, offered, expected) => {
    const { f, delivered } = follower()
    for (const seq of offered) f.offer(ev(seq), '')
    expect(delivered).toEqual(expected)
    f.close()
  })

  it('resume - replays what was stored after the sequence, then live, each once', async () => {
    const { f, delivered } = follower({ afterSeq: 2, stored: [1, 2, 3, 4, 5] })
    f.offer(ev(5), '') // live while the replay is read
    f.offer(ev(6), '')
    await vi.waitFor(() => expect(delivered).toEqual([3, 4, 5, 6]))
    f.close()
  })

  it('gap - a missing live event is read from the log', async () => {
    const { f, delivered, store } = follower()
    f.offer(ev(1), '')
    f.offer(ev(4), '')
    expect(delivered).toEqual([1])
    store([1, 2, 3, 4])
    await vi.waitFor(() => expect(delivered).toEqual([1, 2, 3, 4]))
    f.close()
  })

  it('gap - waits for an event still being stored, then gives up after giveUpMs', async () => {
    const { f, delivered, skipped, reads } = follower({ giveUpMs: 100 })
    f.offer(ev(1), '')
    f.offer(ev(3), '')
    // The log was looked in again and again (every retryMs) before giveUpMs, and 3 still waits for 2.
    await vi.waitFor(() => expect(reads.count).toBeGreaterThanOrEqual(2))
    expect(delivered).toEqual([1])
    await vi.waitFor(() => expect(delivered).toEqual([1, 3]))
    expect(skipped).toEqual([[2, 2]])
    f.close()
  })

  it('catch up - a last event missed live (nothing came after it) is found in the log once the follower is quiet', async () => {
    const { f, delivered, reads, store } = follower()
    f.offer(ev(1), '')
    store([1, 2])
    f.catchUp(60_000) // not quiet long enough: nothing read (a read would have started at once)
    expect(reads.count).toBe(0)
    expect(delivered).toEqual([1])
    f.catchUp(0)
    await vi.waitFor(() => expect(delivered).toEqual([1, 2]))
    f.close()
  })

  it('resume - from further back than the log keeps starts at its oldest event', async () => {
    const { f, delivered, skipped } = follower({ afterSeq: 1, stored: [50, 51] })
    await vi.waitFor(() => expect(delivered).toEqual([50, 51]))
    expect(skipped).toEqual([[2, 49]])
    f.close()
  })
  // A follower attached for a turn it starts: hold() before the execute is sent, release() with the runner's answer.
  it.each([
    ['live events before the answer wait for it, then go out in order', [3, 4], 2, [3, 4], [3, 4]],
    ['the first events missed live are filled from the log', [4], 2, [3, 4], [3, 4]],
    ["an earlier turn's events kept while waiting are not delivered", [1, 2, 3], 2, [1, 2, 3], [3]],
    ['a refused turn starts at the first event kept', [5, 6], undefined, [], [5, 6]],
  ] as const)('start - %s', async (_name, live, afterSeq, stored, expected) => {
    const { f, delivered, store } = follower()
    store([...stored])
    expect(f.hold()).toBe(true)
    for (const seq of live) f.offer(ev(seq), '')
    expect(delivered).toEqual([])
    f.release(afterSeq)
    await vi.waitFor(() => expect(delivered).toEqual(expected))
    f.close()
  })

  it('start - a turn whose every event was missed live is found in the log when the follower catches up', async () => {
    const { f, delivered, store } = follower()
    f.hold()
    f.release(7)
    store([6, 7, 8, 9])
    f.catchUp(0)
    await vi.waitFor(() => expect(delivered).toEqual([8, 9]))
    f.close()
  })

  it('start - two turns started at once: the follower waits for both answers and starts after the lower', async () => {
    const { f, delivered } = follower()
    f.hold()
    f.hold()
    f.offer(ev(3), '')
    f.release(4)
    expect(delivered).toEqual([])
    f.release(2)
    expect(delivered).toEqual([3])
    f.close()
  })

  it('start - a follower that knows its place needs no hold', () => {
    const { f, delivered } = follower({ afterSeq: 0 })
    expect(f.hold()).toBe(false)
    const live = follower()
    live.f.offer(ev(1), '')
    expect(live.f.hold()).toBe(false)
    live.f.offer(ev(2), '')
    expect(live.delivered).toEqual([1, 2])
    expect(delivered).toEqual([])
    f.close()
    live.f.close()
  })
})
