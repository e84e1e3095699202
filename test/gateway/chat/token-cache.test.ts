import { describe, expect, it } from 'vitest'
import { AccessTokenCache, type FetchedToken } from '../../../gateway/chat/token-cache.ts'
import { manualClock } from '../../fixtures/chat.ts'

const HOUR2 = 7_200_000
const EARLY = 5 * 60_000

/** A fetcher the test answers by hand. */
function handFetcher() {
  const pending: PromiseWithResolvers<FetchedToken>[] = []
  let issued = 0
  return {
    pending,
    fetch: () => {
      const deferred = Promise.withResolvers<FetchedToken>()
      pending.push(deferred)
      return deferred.promise
    },
    answer(expiresInMs = HOUR2) {
      pending.shift()!.resolve({ token: `t${++issued}`, expiresInMs })
    },
    fail() {
      pending.shift()!.reject(new Error('token endpoint down'))
    },
  }
}

describe('chat token cache', () => {
  it('token cache - the first use fetches, later uses reuse the token', async () => {
    const clock = manualClock()
    const fetcher = handFetcher()
    const cache = new AccessTokenCache({ fetch: fetcher.fetch, now: clock.now })
    const first = cache.get()
    fetcher.answer()
    expect(await first).toBe('t1')
    clock.advance(HOUR2 - EARLY - 1)
    expect(await cache.get()).toBe('t1')
    expect(cache.fetches).toBe(1)
  })

  it('token cache - refreshed five minutes before expiry', async () => {
    const clock = manualClock()
    const fetcher = handFetcher()
    const cache = new AccessTokenCache({ fetch: fetcher.fetch, now: clock.now })
    const first = cache.get()
    fetcher.answer()
    await first
    clock.advance(HOUR2 - EARLY)
    const second = cache.get()
    expect(fetcher.pending).toHaveLength(1)
    fetcher.answer()
    expect(await second).toBe('t2')
  })

  it('token cache - concurrent callers share one fetch', async () => {
    const fetcher = handFetcher()
    const cache = new AccessTokenCache({ fetch: fetcher.fetch })
    const all = Promise.all(Array.from({ length: 20 }, () => cache.get()))
    expect(fetcher.pending).toHaveLength(1)
    fetcher.answer()
    expect(new Set(await all)).toEqual(new Set(['t1']))
    expect(cache.fetches).toBe(1)
  })

  it('token cache - a failed fetch reaches every waiter and is not cached', async () => {
    const fetcher = handFetcher()
    const cache = new AccessTokenCache({ fetch: fetcher.fetch })
    const a = cache.get()
    const b = cache.get()
    fetcher.fail()
    await expect(a).rejects.toThrow('token endpoint down')
    await expect(b).rejects.toThrow('token endpoint down')
    const c = cache.get()
    fetcher.answer()
    expect(await c).toBe('t1')
  })

  it('token cache - invalidating the current token forces one refresh; a stale invalidation is ignored', async () => {
    const fetcher = handFetcher()
    const cache = new AccessTokenCache({ fetch: fetcher.fetch })
    const first = cache.get()
    fetcher.answer()
    await first
    // Two senders got 401 with t1: one refresh between them.
    cache.invalidate('t1')
    const a = cache.get()
    cache.invalidate('t1')
    const b = cache.get()
    expect(fetcher.pending).toHaveLength(1)
    fetcher.answer()
    expect([await a, await b]).toEqual(['t2', 't2'])
    // A late 401 for t1 does not throw away t2.
    cache.invalidate('t1')
    expect(await cache.get()).toBe('t2')
    expect(cache.fetches).toBe(2)
  })

  it('token cache - a lifetime under ten minutes is refreshed at half-life', async () => {
    const clock = manualClock()
    const fetcher = handFetcher()
    const cache = new AccessTokenCache({ fetch: fetcher.fetch, now: clock.now })
    const first = cache.get()
    fetcher.answer(60_000)
    await first
    clock.advance(29_999)
    expect(await cache.get()).toBe('t1')
    clock.advance(1)
    void cache.get()
    expect(fetcher.pending).toHaveLength(1)
  })
})
