import { randomFillSync } from 'node:crypto'

/** The id kinds OpenCode uses, by prefix. */
export type IdPrefix = 'ses' | 'msg' | 'prt' | 'evt'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_CHARS = 14

/** Makes ids; injected so the mapper stays deterministic under test. */
export type IdSource = (prefix: IdPrefix) => string

/**
 * OpenCode-style ids (`prt_1ff855ba8001…`): 12 hex digits of time and a
 * counter, then random base62, so ids made later sort after earlier ones —
 * OpenCode clients order messages and parts by id.
 */
export function ascendingIds(clock: () => number = Date.now): IdSource {
  let lastTime = 0
  let counter = 0
  return (prefix) => {
    const now = clock()
    if (now !== lastTime) {
      lastTime = now
      counter = 0
    }
    counter++
    const value = BigInt(now) * 0x1000n + BigInt(counter)
    const hex = value.toString(16).padStart(12, '0').slice(-12)
    return `${prefix}_${hex}${randomBase62(RANDOM_CHARS)}`
  }
}

/** Ids `<prefix>_<n>` counting up from 1: for tests. */
export function sequentialIds(): IdSource {
  const counters = new Map<IdPrefix, number>()
  return (prefix) => {
    const next = (counters.get(prefix) ?? 0) + 1
    counters.set(prefix, next)
    return `${prefix}_${next}`
  }
}

/** Random bytes drawn a pool at a time: one system call per ~290 ids rather than one per id (a part makes several ids). */
const POOL = Buffer.alloc(4096)
let poolOffset = POOL.length

function randomBase62(length: number): string {
  if (poolOffset + length > POOL.length) {
    randomFillSync(POOL)
    poolOffset = 0
  }
  let out = ''
  for (let i = poolOffset; i < poolOffset + length; i++) out += BASE62[POOL[i]! % 62]
  poolOffset += length
  return out
}
