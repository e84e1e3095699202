/**
 * The outbound access token (spec §5.2): fetched on first use, cached for
 * its lifetime, refreshed `refreshEarlyMs` (5 minutes) before it expires.
 * Concurrent callers share one fetch; a failed fetch is not cached.
 */

/** A fetched token and how long it lives. */
export interface FetchedToken {
  token: string
  expiresInMs: number
}

export interface TokenCacheOptions {
  fetch: () => Promise<FetchedToken>
  now?: () => number
  /** How long before expiry a token is replaced; default 5 minutes. */
  refreshEarlyMs?: number
}

export const REFRESH_EARLY_MS = 5 * 60_000

export class AccessTokenCache {
  readonly #fetch: () => Promise<FetchedToken>
  readonly #now: () => number
  readonly #refreshEarlyMs: number
  #cached: { token: string; refreshAt: number } | undefined
  #inflight: Promise<string> | undefined
  #fetches = 0

  constructor(options: TokenCacheOptions) {
    this.#fetch = options.fetch
    this.#now = options.now ?? Date.now
    this.#refreshEarlyMs = options.refreshEarlyMs ?? REFRESH_EARLY_MS
  }

  /** A usable token: the cached one while fresh, else the result of one shared fetch. */
  get(): Promise<string> {
    if (this.#cached && this.#now() < this.#cached.refreshAt) return Promise.resolve(this.#cached.token)
    this.#inflight ??= this.#refresh().finally(() => {
      this.#inflight = undefined
    })
    return this.#inflight
  }

  /**
   * Forgets `token` after the API refused it (401). A no-op when the cache
   * already holds another one: a concurrent caller refreshed first.
   */
  invalidate(token: string): void {
    if (this.#cached?.token === token) this.#cached = undefined
  }

  /** Fetches made so far (for logs and tests). */
  get fetches(): number {
    return this.#fetches
  }

  async #refresh(): Promise<string> {
    this.#fetches++
    const { token, expiresInMs } = await this.#fetch()
    // A lifetime shorter than twice the early margin would never be fresh: refresh at half-life then.
    const early = Math.min(this.#refreshEarlyMs, expiresInMs / 2)
    this.#cached = { token, refreshAt: this.#now() + expiresInMs - early }
    return token
  }
}
