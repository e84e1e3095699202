import { MemoryDocuments, type Documents } from '../../state/mod.ts'
import type { SessionInfo } from './schemas/session.ts'

/** What the REST layer keeps about a session it created. */
export interface OpencodeSessionRecord {
  info: SessionInfo
  /** The work_dir the client asked for; every prompt's execute carries it. */
  work_dir?: string
  /** The tenant that created it (absent on records older than tenants: `default`); only it sees the session. */
  tenant?: string
}

/**
 * Where the REST layer keeps the sessions it created (not the runners'
 * session registry of state/). Narrow and asynchronous so that a
 * JetStream KV bucket can stand in for the in-memory map (insert = KV create,
 * update = KV put with the last revision, list = keys + get).
 */
export interface OpencodeSessionStore {
  /** Stores the record unless its id exists; answers the stored record either way. */
  insert(record: OpencodeSessionRecord): Promise<{ record: OpencodeSessionRecord; created: boolean }>
  get(id: string): Promise<OpencodeSessionRecord | undefined>
  list(): Promise<OpencodeSessionRecord[]>
  /** Replaces an existing record; false when there is none. */
  update(record: OpencodeSessionRecord): Promise<boolean>
  delete(id: string): Promise<boolean>
}

/**
 * The store over a document bucket: in memory in dev mode, a JetStream
 * key-value bucket in production, where every gateway sees the same sessions.
 */
export class DocumentSessionStore implements OpencodeSessionStore {
  readonly #docs: Documents<OpencodeSessionRecord>

  constructor(docs: Documents<OpencodeSessionRecord> = new MemoryDocuments()) {
    this.#docs = docs
  }

  async insert(record: OpencodeSessionRecord): Promise<{ record: OpencodeSessionRecord; created: boolean }> {
    const { doc, created } = await this.#docs.insert(record.info.id, record)
    return { record: doc, created }
  }

  get(id: string): Promise<OpencodeSessionRecord | undefined> {
    return this.#docs.get(id)
  }

  list(): Promise<OpencodeSessionRecord[]> {
    return this.#docs.list()
  }

  update(record: OpencodeSessionRecord): Promise<boolean> {
    return this.#docs.update(record.info.id, record)
  }

  delete(id: string): Promise<boolean> {
    return this.#docs.delete(id)
  }
}
