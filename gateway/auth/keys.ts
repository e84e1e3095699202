import { createHash, timingSafeEqual } from 'node:crypto'
import { DEFAULT_TENANT } from './config.ts'

/**
 * The configured API keys. A presented key is compared with every configured
 * key, always all of them, as SHA-256 digests with `timingSafeEqual`: the
 * digests have one fixed length, so neither the key's length nor the position
 * of the first differing byte shows in the time a comparison takes.
 */
export class ApiKeys {
  readonly #digests: Buffer[]
  readonly #tenants: string[]

  /** `tenants[i]`: the tenant of `keys[i]` (default: every key is the tenant `default`). */
  constructor(keys: readonly string[], tenants?: readonly string[]) {
    const unique = [...new Set(keys)]
    this.#digests = unique.map(digest)
    this.#tenants = unique.map((key) => tenants?.[keys.indexOf(key)] ?? DEFAULT_TENANT)
  }

  /** The tenant of the key at `index` (from match); `default` for -1 (no keys configured). */
  tenant(index: number): string {
    return this.#tenants[index] ?? DEFAULT_TENANT
  }

  /** True when at least one key is configured: requests must then carry one. */
  get enabled(): boolean {
    return this.#digests.length > 0
  }

  get size(): number {
    return this.#digests.length
  }

  /** The index of the configured key equal to `candidate`, or -1. Takes the same time whichever key matches, or none. */
  match(candidate: string): number {
    const presented = digest(candidate)
    let found = -1
    for (const [index, known] of this.#digests.entries()) {
      // No early exit: every key is compared.
      if (timingSafeEqual(presented, known) && found === -1) found = index
    }
    return found
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}
