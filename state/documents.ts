import type { KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import { openBucket } from './bucket.ts'
import { sessionKey } from './keys.ts'

/** JSON documents by id: what a surface keeps about its sessions, shared by every gateway in production. */
export interface Documents<T> {
  /** Stores the document unless the id exists; answers the stored one either way. */
  insert(id: string, doc: T): Promise<{ doc: T; created: boolean }>
  get(id: string): Promise<T | undefined>
  list(): Promise<T[]>
  /** Replaces an existing document; false when there is none. */
  update(id: string, doc: T): Promise<boolean>
  delete(id: string): Promise<boolean>
}

export class MemoryDocuments<T> implements Documents<T> {
  readonly #docs: Map<string, T>

  constructor(initial: Iterable<[string, T]> = []) {
    this.#docs = new Map(initial)
  }

  async insert(id: string, doc: T): Promise<{ doc: T; created: boolean }> {
    const existing = this.#docs.get(id)
    if (existing !== undefined) return { doc: existing, created: false }
    this.#docs.set(id, doc)
    return { doc, created: true }
  }

  async get(id: string): Promise<T | undefined> {
    return this.#docs.get(id)
  }

  async list(): Promise<T[]> {
    return [...this.#docs.values()]
  }

  async update(id: string, doc: T): Promise<boolean> {
    if (!this.#docs.has(id)) return false
    this.#docs.set(id, doc)
    return true
  }

  async delete(id: string): Promise<boolean> {
    return this.#docs.delete(id)
  }
}

/** Documents in a JetStream key-value bucket (one revision per key). */
export class KvDocuments<T> implements Documents<T> {
  readonly #kv: KV

  private constructor(kv: KV) {
    this.#kv = kv
  }

  static async open<T>(
    nc: NatsConnection,
    subjectPrefix: string,
    name: string,
    settings: { storage: 'file' | 'memory'; replicas: number },
  ): Promise<KvDocuments<T>> {
    return new KvDocuments<T>(await openBucket(nc, subjectPrefix, name, settings))
  }

  async insert(id: string, doc: T): Promise<{ doc: T; created: boolean }> {
    try {
      await this.#kv.create(sessionKey(id), JSON.stringify(doc))
      return { doc, created: true }
    } catch (err) {
      const existing = await this.get(id)
      if (existing === undefined) throw err
      return { doc: existing, created: false }
    }
  }

  async get(id: string): Promise<T | undefined> {
    const entry = await this.#kv.get(sessionKey(id))
    return entry?.operation === 'PUT' ? entry.json<T>() : undefined
  }

  async list(): Promise<T[]> {
    const docs: T[] = []
    for await (const key of await this.#kv.keys()) {
      const entry = await this.#kv.get(key)
      if (entry?.operation === 'PUT') docs.push(entry.json<T>())
    }
    return docs
  }

  async update(id: string, doc: T): Promise<boolean> {
    // Compare-and-set on the revision read: a document deleted meanwhile stays deleted.
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#kv.get(sessionKey(id))
      if (entry?.operation !== 'PUT') return false
      try {
        await this.#kv.update(sessionKey(id), JSON.stringify(doc), entry.revision)
        return true
      } catch (err) {
        if (attempt >= 3) throw err
      }
    }
  }

  async delete(id: string): Promise<boolean> {
    const entry = await this.#kv.get(sessionKey(id))
    if (entry?.operation !== 'PUT') return false
    await this.#kv.delete(sessionKey(id))
    return true
  }
}
