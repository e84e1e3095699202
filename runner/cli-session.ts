import { createHash, randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { ServiceError } from '../contract/mod.ts'
import { sessionPathName } from './sandbox.ts'

/** Namespace UUID for deriving CLI conversation ids (RFC 9562 name-based, SHA-1). */
const CLI_SESSION_NAMESPACE = '6f1d4bde-64c3-4c8e-9b53-1e3c2a8e5f70'

/**
 * The CLI's conversation UUID for a session: a UUIDv5 of namespace + session id,
 * so any runner, before or after a restart, derives the same one. Ids that are
 * not well-formed UTF-16 are refused (BAD_REQUEST): their UTF-8 would replace
 * each lone surrogate by U+FFFD and give two sessions one conversation.
 */
export function cliSessionId(namespace: string, sessionId: string): string {
  if (!sessionId.isWellFormed()) {
    throw new ServiceError('BAD_REQUEST', 'the session id must be well-formed UTF-16 text (it holds a lone surrogate)')
  }
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
  /** The engine the conversation is in (engines[].name); none: a marker from before engines had names (the default). */
  engine?: string
  /** The CLI's own id of the conversation, when it named it itself (a Codex thread, an ACP session); it resumes under this one. */
  conversation_id?: string
  created_at: string
}

/**
 * Markers live in one directory, a file per session (`sessionPathName` +
 * `.json`), written atomically. Failures are INTERNAL errors whose message
 * names no server path (it may reach a client); the file system's error is
 * the cause.
 */
export class MarkerStore {
  readonly dir: string
  constructor(dir: string) {
    this.dir = dir
  }

  #file(sessionId: string): string {
    return path.join(this.dir, `${sessionPathName(sessionId)}.json`)
  }

  async read(sessionId: string): Promise<SessionMarker | undefined> {
    const file = this.#file(sessionId)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw markerFailure('read', err)
    }
    try {
      return JSON.parse(text) as SessionMarker
    } catch (err) {
      throw markerFailure('read', err)
    }
  }

  async write(marker: SessionMarker): Promise<void> {
    const file = this.#file(marker.session_id)
    // A short temporary name: the marker's own name may be 255 bytes already.
    const temp = path.join(this.dir, `.tmp-${randomUUID()}`)
    try {
      await mkdir(this.dir, { recursive: true })
      await writeFile(temp, JSON.stringify(marker) + '\n')
      await rename(temp, file)
    } catch (err) {
      await rm(temp, { force: true }).catch(() => {})
      throw markerFailure('written', err)
    }
  }
}

function markerFailure(what: 'read' | 'written', err: unknown): ServiceError {
  const reason = err instanceof SyntaxError ? 'not JSON' : ((err as NodeJS.ErrnoException | null)?.code ?? 'error')
  return new ServiceError('INTERNAL', `the session's marker could not be ${what} (${reason})`, { cause: err })
}
