/**
 * A token bucket: `burst` tokens, refilled at `rate` per second; each request
 * takes one. Pure: the caller passes the time, so tests need no clock.
 */
export class TokenBucket {
  readonly #rate: number
  readonly #burst: number
  #tokens: number
  #at: number

  constructor(rate: number, burst: number, now: number) {
    this.#rate = rate
    this.#burst = burst
    this.#tokens = burst
    this.#at = now
  }

  /** Takes a token: 0 when one was there, else the milliseconds until one will be. */
  take(now: number): number {
    this.#refill(now)
    if (this.#tokens >= 1) {
      this.#tokens -= 1
      return 0
    }
    return Math.ceil(((1 - this.#tokens) / this.#rate) * 1000)
  }

  /** True when the bucket is full again (it can be forgotten without changing any answer). */
  full(now: number): boolean {
    this.#refill(now)
    return this.#tokens >= this.#burst
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#at)
    this.#at = Math.max(this.#at, now)
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed / 1000) * this.#rate)
  }
}
