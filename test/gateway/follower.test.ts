import { describe, expect, it, vi } from 'vitest'
import type { ServiceEvent } from '../../contract/mod.ts'
import { Follower } from '../../gateway/follower.ts'

const ev = (seq: number): ServiceEvent => ({ event: 'answer', data: `e${seq}`, session_id: 's', seq })

function follower(options: { afterSeq?: number; stored?: number[]; giveUpMs?: number } = {}) {
  const delivered: number[] = []
  const skipped: [number, number][] = []
  let stored = options.stored ?? []
  const f = new Follower({
    listener: (event) => delivered.push(event.seq!),
    afterSeq: options.afterSeq,
    read: async (after) => stored.filter((seq) => seq > after).map(ev),
    retryMs: 10,
    giveUpMs: options.giveUpMs ?? 60_000,
    onSkip: (from, to) => skipped.push([from, to]),
    onReadError: () => {},
  })
  return { f, delivered, skipped, store: (seqs: number[]) => (stored = seqs) }
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
    const { f, delivered, skipped } = follower({ giveUpMs: 100 })
    f.offer(ev(1), '')
    f.offer(ev(3), '')
    await new Promise((resolve) => setTimeout(resolve, 40))
    expect(delivered).toEqual([1])
    await vi.waitFor(() => expect(delivered).toEqual([1, 3]))
    expect(skipped).toEqual([[2, 2]])
    f.close()
  })

  it('catch up - a last event missed live (nothing came after it) is found in the log once the follower is quiet', async () => {
    const { f, delivered, store } = follower()
    f.offer(ev(1), '')
    store([1, 2])
    f.catchUp(60_000) // not quiet long enough: nothing read
    await new Promise((resolve) => setTimeout(resolve, 20))
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
})
