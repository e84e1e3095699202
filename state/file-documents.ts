import { appendFile, mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { MemoryDocuments, type Documents } from './documents.ts'

/** One line of the file: a document written, or removed. */
type Line<T> = { id: string; doc: T } | { id: string; deleted: true }

/**
 * Documents in one JSON-lines file, read whole at open, appended to on each
 * change: for what dev mode (no JetStream) must keep across restarts, such as
 * which tenant owns a session (its conversation and sandbox outlive the
 * process). One process writes it; a torn last line (a crash mid-write) is skipped.
 */
export class FileDocuments<T> implements Documents<T> {
  readonly #file: string
  /** What the file holds, as of the last change. */
  readonly #docs: MemoryDocuments<T>
  /** Appends, one after another, so lines never interleave. */
  #writes: Promise<void> = Promise.resolve()

  private constructor(file: string, docs: Map<string, T>) {
    this.#file = file
    this.#docs = new MemoryDocuments(docs)
  }

  static async open<T>(file: string): Promise<FileDocuments<T>> {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
    const docs = new Map<string, T>()
    let text = ''
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue
      let entry: Line<T>
      try {
        entry = JSON.parse(line) as Line<T>
      } catch {
        continue
      }
      if ('deleted' in entry) docs.delete(entry.id)
      else docs.set(entry.id, entry.doc)
    }
    return new FileDocuments(file, docs)
  }

  async insert(id: string, doc: T): Promise<{ doc: T; created: boolean }> {
    // Taken at once (create-only within the process), then written; a failed write takes it back.
    const inserted = await this.#docs.insert(id, doc)
    if (!inserted.created) return inserted
    try {
      await this.#append({ id, doc })
    } catch (err) {
      if ((await this.#docs.get(id)) === doc) await this.#docs.delete(id)
      throw err
    }
    return inserted
  }

  get(id: string): Promise<T | undefined> {
    return this.#docs.get(id)
  }

  list(): Promise<T[]> {
    return this.#docs.list()
  }

  async update(id: string, doc: T): Promise<boolean> {
    if (!(await this.#docs.update(id, doc))) return false
    await this.#append({ id, doc })
    return true
  }

  async delete(id: string): Promise<boolean> {
    if (!(await this.#docs.delete(id))) return false
    await this.#append({ id, deleted: true })
    return true
  }

  #append(line: Line<T>): Promise<void> {
    const written = this.#writes.then(() => appendFile(this.#file, JSON.stringify(line) + '\n', { mode: 0o600 }))
    this.#writes = written.catch(() => {})
    return written
  }
}
