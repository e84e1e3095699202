import { createHash } from 'node:crypto'
import path from 'node:path'
import { sessionToken } from '../../contract/mod.ts'
import type { SessionInfo } from './schemas/session.ts'

/** The project every session belongs to: OpenCode's name for "not inside a git project". */
export const DEFAULT_PROJECT = 'global'

const ADJECTIVES = [
  'quiet',
  'brave',
  'calm',
  'eager',
  'gentle',
  'lucky',
  'proud',
  'swift',
  'bright',
  'bold',
  'kind',
  'clever',
  'witty',
  'silent',
  'steady',
  'sunny',
]
const NOUNS = [
  'garden',
  'river',
  'forest',
  'harbor',
  'meadow',
  'canyon',
  'island',
  'valley',
  'comet',
  'falcon',
  'lantern',
  'orchard',
  'summit',
  'willow',
  'beacon',
  'prairie',
]

/** A readable slug like OpenCode's (`quiet-garden`), stable for an id. */
export function slugFor(id: string): string {
  const digest = createHash('sha256').update(id).digest()
  return `${ADJECTIVES[digest[0]! % ADJECTIVES.length]}-${NOUNS[digest[1]! % NOUNS.length]}`
}

/** OpenCode's default title for a new session. */
export function defaultTitle(createdAt: number): string {
  return `New session - ${new Date(createdAt).toISOString()}`
}

/**
 * The session's sandbox as the runner will resolve it (runner/sandbox.ts):
 * work_dir inside the base, else a directory named after the session. Without
 * the base, the path relative to it.
 */
export function directoryFor(workBase: string | undefined, id: string, workDir: string | undefined): string {
  const relative = workDir === undefined || workDir === '' ? sessionToken(id) : workDir
  return workBase === undefined ? relative : path.resolve(workBase, relative)
}

export function newSessionInfo(fields: { id: string; directory: string; title?: string | undefined; now: number; version: string }): SessionInfo {
  return {
    id: fields.id,
    slug: slugFor(fields.id),
    projectID: DEFAULT_PROJECT,
    directory: fields.directory,
    title: fields.title ?? defaultTitle(fields.now),
    version: fields.version,
    time: { created: fields.now, updated: fields.now },
  }
}
