import { ServiceError } from '../../contract/mod.ts'
import { TokenBucket } from './token-bucket.ts'

export interface RateLimiterOptions {
  /** Requests per second per key; 0 turns the limiter off. */
  rate: number
  burst: number
  now?: () => number
  /** Buckets kept at most (client addresses are many); full buckets are dropped first. */
  maxKeys?: number
}

/** One token bucket per key (an API key's index, or a client address). */
export class RateLimiter {
  readonly #options: Required<RateLimiterOptions>
  readonly #buckets = new Map<string, TokenBucket>()

  constructor(options: RateLimiterOptions) {
    this.#options = { now: Date.now, maxKeys: 10_000, ...options }
  }

  get enabled(): boolean {
    return this.#options.rate > 0
  }

  /** Counts one request of `key`; throws RATE_LIMITED (with `retryAfterMs`) when its bucket is empty. */
  take(key: string): void {
    if (!this.enabled) return
    const { rate, burst, now } = this.#options
    const at = now()
    let bucket = this.#buckets.get(key)
    if (bucket)
      this.#buckets.delete(key) // re-inserted below: the map stays in least-recently-used order
    else bucket = new TokenBucket(rate, burst, at)
    this.#buckets.set(key, bucket)
    this.#evict(at)
    const waitMs = bucket.take(at)
    if (waitMs > 0) throw new RateLimitedError(waitMs)
  }

  get size(): number {
    return this.#buckets.size
  }

  #evict(at: number): void {
    if (this.#buckets.size <= this.#options.maxKeys) return
    for (const [key, bucket] of this.#buckets) {
      if (this.#buckets.size <= this.#options.maxKeys) return
      // A full bucket answers like a new one would; an empty one is kept unless there is no other way.
      if (bucket.full(at)) this.#buckets.delete(key)
    }
    while (this.#buckets.size > this.#options.maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!)
  }
}

/** RATE_LIMITED with the wait the client should honour. */
export class RateLimitedError extends ServiceError {
  readonly retryAfterMs: number
  constructor(retryAfterMs: number) {
    super('RATE_LIMITED', `too many requests; retry in ${Math.ceil(retryAfterMs / 1000)} s`)
    this.retryAfterMs = retryAfterMs
  }
}
