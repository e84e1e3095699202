import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { sessionToken } from '../contract/mod.ts'

/** Namespace UUID for deriving CLI conversation ids (RFC 9562 name-based, SHA-1). */
const CLI_SESSION_NAMESPACE = '6f1d4bde-64c3-4c8e-9b53-1e3c2a8e5f70'

/**
 * The CLI's conversation UUID for a session: a UUIDv5 of namespace + session id,
 * so any runner, before or after a restart, derives the same one.
 */
export function cliSessionId(namespace: string, sessionId: string): string {
  const ns = Buffer.from(CLI_SESSION_NAMESPACE.replaceAll('-', ''), 'hex')
  const hash = createHash('sha1').update(ns).update(`${namespace}\0${sessionId}`, 'utf8').digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** What a marker records: the CLI has a stored conversation for this session. */
export interface SessionMarker {
  session_id: string
  cli_session_id: string
  work_dir: string
  /** The appended system prompt the conversation started with; the CLI keeps it across --resume. */
  instructions?: string
  created_at: string
}

/** Markers live in one directory, a file per session, written atomically. */
export class MarkerStore {
  readonly dir: string
  constructor(dir: string) {
    this.dir = dir
  }

  #file(sessionId: string): string {
    return path.join(this.dir, `${sessionToken(sessionId)}.json`)
  }

  async read(sessionId: string): Promise<SessionMarker | undefined> {
    try {
      return JSON.parse(await readFile(this.#file(sessionId), 'utf8')) as SessionMarker
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }

  async write(marker: SessionMarker): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    const file = this.#file(marker.session_id)
    const temp = `${file}.${process.pid}.tmp`
    await writeFile(temp, JSON.stringify(marker) + '\n')
    await rename(temp, file)
  }
}
