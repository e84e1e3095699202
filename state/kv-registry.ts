import { KvWatchInclude, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import { openBucket } from './bucket.ts'
import { sessionKey } from './keys.ts'
import { RegistryConflictError, RunnerLease, SessionRecord, type RegistryChange, type RunnerLeases, type SessionRegistry, type Versioned } from './registry.ts'

export interface KvSettings {
  storage: 'file' | 'memory'
  replicas: number
  leaseTtlMs: number
  /** False: bind to the existing bucket only (state/bucket.ts). */
  create?: boolean | undefined
}

/** JetStream's answer when a create or compare-and-set finds another revision. */
function isConflict(err: unknown): boolean {
  const text = String((err as Error)?.message ?? err)
  return /wrong last sequence|key exists|10071/i.test(text)
}

/** The session registry in a JetStream key-value bucket (one revision kept per key). */
export class KvRegistry implements SessionRegistry {
  readonly #kv: KV

  private constructor(kv: KV) {
    this.#kv = kv
  }

  static async open(nc: NatsConnection, subjectPrefix: string, settings: KvSettings): Promise<KvRegistry> {
    return new KvRegistry(await openBucket(nc, subjectPrefix, 'sessions', settings))
  }

  async get(sessionId: string): Promise<Versioned<SessionRecord> | undefined> {
    const entry = await this.#kv.get(sessionKey(sessionId))
    if (entry?.operation !== 'PUT') return undefined
    return { value: SessionRecord.parse(entry.json()), revision: entry.revision }
  }

  async create(record: SessionRecord): Promise<number> {
    try {
      return await this.#kv.create(sessionKey(record.session_id), JSON.stringify(record))
    } catch (err) {
      if (isConflict(err)) throw new RegistryConflictError(`session ${record.session_id} exists`, { cause: err })
      throw err
    }
  }

  async update(record: SessionRecord, revision: number): Promise<number> {
    try {
      return await this.#kv.update(sessionKey(record.session_id), JSON.stringify(record), revision)
    } catch (err) {
      if (isConflict(err)) throw new RegistryConflictError(`session ${record.session_id} changed`, { cause: err })
      throw err
    }
  }

  async delete(sessionId: string): Promise<void> {
    await this.#kv.delete(sessionKey(sessionId))
  }

  /**
   * Every record, read through one watcher of the last values rather than a get per key (a get is a round
   * trip: 5,000 sessions took 1.1 s that way, see README). `delta` counts the entries still to come of the
   * initial values; the last one has 0. An empty bucket has none, so it is asked first.
   */
  async list(): Promise<SessionRecord[]> {
    const records: SessionRecord[] = []
    if ((await this.#kv.status()).values === 0) return records
    const watcher = await this.#kv.watch({ include: KvWatchInclude.LastValue })
    try {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT') records.push(SessionRecord.parse(entry.json()))
        // isUpdate: the initial values are done (the bucket was emptied between the two reads).
        if (entry.delta === 0 || entry.isUpdate) break
      }
    } finally {
      watcher.stop()
    }
    return records
  }

  async watch(onChange: (change: RegistryChange) => void): Promise<() => void> {
    const watcher = await this.#kv.watch({ include: KvWatchInclude.UpdatesOnly })
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT') onChange({ type: 'put', record: SessionRecord.parse(entry.json()) })
        else onChange({ type: 'delete', session_id: entry.key })
      }
    })()
    return () => watcher.stop()
  }
}

/** Runner leases in a bucket whose entries expire after the lease TTL unless renewed. */
export class KvLeases implements RunnerLeases {
  readonly #kv: KV

  private constructor(kv: KV) {
    this.#kv = kv
  }

  static async open(nc: NatsConnection, subjectPrefix: string, settings: KvSettings): Promise<KvLeases> {
    return new KvLeases(await openBucket(nc, subjectPrefix, 'runners', settings, settings.leaseTtlMs))
  }

  async renew(lease: RunnerLease): Promise<void> {
    await this.#kv.put(lease.runner_id, JSON.stringify(lease))
  }

  async get(runnerId: string): Promise<RunnerLease | undefined> {
    const entry = await this.#kv.get(runnerId)
    return entry?.operation === 'PUT' ? RunnerLease.parse(entry.json()) : undefined
  }

  async list(): Promise<RunnerLease[]> {
    const leases: RunnerLease[] = []
    for await (const key of await this.#kv.keys()) {
      const lease = await this.get(key)
      if (lease) leases.push(lease)
    }
    return leases
  }

  async release(runnerId: string): Promise<void> {
    await this.#kv.delete(runnerId)
  }
}
