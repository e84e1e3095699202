import { createHash } from 'node:crypto'
import { mkdir, realpath } from 'node:fs/promises'
import path from 'node:path'
import { isInside, ServiceError, sessionToken, workDirProblem, workDirRejected } from '../contract/mod.ts'

/**
 * The longest session token used as a file or directory name as it is. Names
 * may be 255 bytes; the marker file adds `.json`. Ids whose token fits keep
 * the names they always had; longer ones (ids of up to 256 characters of any
 * text the README allows) are named by a digest instead.
 */
const MAX_PLAIN_NAME = 250

/**
 * The file or directory name of a session (its default sandbox, its marker):
 * the session token when it fits in a name (`[A-Za-z0-9_-]` ids as they are,
 * others `~` + base64url of their UTF-8), else `~~` + base64url of the
 * SHA-256 of the id's UTF-8 (46 characters; `~` + base64url never holds a
 * second `~`, so the three forms never meet). Ids that are not well-formed
 * UTF-16 are refused: their UTF-8 would replace each lone surrogate by
 * U+FFFD and give two sessions one name.
 */
export function sessionPathName(sessionId: string): string {
  if (!sessionId.isWellFormed()) {
    throw new ServiceError('BAD_REQUEST', 'the session id must be well-formed UTF-16 text (it holds a lone surrogate)')
  }
  const token = sessionToken(sessionId)
  if (token.length <= MAX_PLAIN_NAME) return token
  return '~~' + createHash('sha256').update(sessionId, 'utf8').digest('base64url')
}

/**
 * Resolves a session's sandbox directory under the base: a relative work_dir
 * is taken inside the base, an absolute one must already lie inside it, none
 * means `<base>/<session path name>`. Anything that lands outside — `..`,
 * another absolute path, a symlink pointing out — is rejected, and so is a
 * default sandbox that is a symlink at all (it could name another session's
 * sandbox). The directory is created when missing. Messages name paths
 * relative to the base only: they reach clients.
 */
export async function resolveSandbox(base: string, sessionId: string, requested: string | undefined): Promise<string> {
  const byDefault = requested === undefined || requested === ''
  const wanted = byDefault ? sessionPathName(sessionId) : requested
  const realBase = await realBaseOf(base)
  const problem = workDirProblem(wanted, realBase)
  if (problem !== undefined) throw workDirRejected(wanted, problem)
  const target = path.resolve(realBase, wanted)
  // Follow symlinks in the part that exists; only then create the rest.
  const existing = await deepestExisting(target)
  const realExisting = await realpath(existing).catch((err: unknown) => {
    throw fsFailure(wanted, err)
  })
  if (!isInside(realBase, realExisting)) throw workDirRejected(wanted, 'a symlink in it points outside the sandbox base')
  const resolved = path.join(realExisting, path.relative(existing, target))
  await makeDir(wanted, resolved)
  // A symlink could have been created between the check and mkdir; check the result too.
  const final = await realpath(resolved).catch((err: unknown) => {
    throw fsFailure(wanted, err)
  })
  if (!isInside(realBase, final)) throw workDirRejected(wanted, 'a symlink in it points outside the sandbox base')
  if (byDefault && final !== target) throw workDirRejected(wanted, "the session's sandbox is a symlink")
  return final
}

/**
 * Checks again, before a CLI starts in it, a sandbox `resolveSandbox`
 * returned (or a marker recorded): it must still be that very directory,
 * inside the base, with no symlink on the way. Between turns the agent may
 * have replaced it (or a parent) with a symlink pointing elsewhere; the CLI
 * would then start there. A sandbox that is gone is created again, unless a
 * parent of it has changed. Returns `dir`.
 */
export async function verifySandbox(base: string, dir: string): Promise<string> {
  const realBase = await realBaseOf(base)
  const label = labelFor(realBase, dir)
  if (!path.isAbsolute(dir) || !isInside(realBase, dir)) throw workDirRejected(label, 'it lies outside the sandbox base')
  let real = await realpath(dir).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw fsFailure(label, err)
  })
  if (real === undefined) {
    // Gone: create it again, but only below a part that is still the real path (no symlink in it).
    const existing = await deepestExisting(dir)
    if ((await realpath(existing).catch(() => undefined)) !== existing) throw workDirRejected(label, 'a symlink in it points elsewhere')
    await makeDir(label, dir)
    real = await realpath(dir).catch((err: unknown) => {
      throw fsFailure(label, err)
    })
  }
  if (real !== dir)
    throw workDirRejected(label, isInside(realBase, real) ? 'a symlink in it points elsewhere' : 'a symlink in it points outside the sandbox base')
  return dir
}

/** A sandbox as client-facing messages may name it: relative to the base (`.` for the base itself), never absolute. */
export async function sandboxLabel(base: string, dir: string): Promise<string> {
  const realBase = await realpath(base).catch(() => path.resolve(base))
  return labelFor(realBase, dir)
}

/** The base, created when missing, with symlinks resolved; failures are the operator's (config), so they keep the path. */
async function realBaseOf(base: string): Promise<string> {
  await mkdir(base, { recursive: true })
  return realpath(base)
}

/** A sandbox path as clients may see it: relative to the base. */
function labelFor(realBase: string, dir: string): string {
  const relative = path.relative(realBase, dir)
  return relative === '' ? '.' : isInside(realBase, dir) ? relative : '(outside the sandbox base)'
}

async function deepestExisting(target: string): Promise<string> {
  let current = target
  for (;;) {
    try {
      await realpath(current)
      return current
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return current
      current = parent
    }
  }
}

async function makeDir(label: string, dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
  } catch (err) {
    throw fsFailure(label, err)
  }
}

/** A file-system failure, told without the server's paths (Node puts them in its messages); the original is the cause. */
function fsFailure(label: string, err: unknown): ServiceError {
  const code = (err as NodeJS.ErrnoException | null)?.code
  if (code === 'ENOTDIR' || code === 'EEXIST') return workDirRejected(label, 'a part of it is a file, not a directory')
  if (code === 'ENAMETOOLONG') return workDirRejected(label, 'a name in it is too long')
  if (code === 'ELOOP') return workDirRejected(label, 'it has a symlink loop')
  return new ServiceError('INTERNAL', `the sandbox "${label}" could not be prepared (${code ?? 'error'})`, { cause: err })
}
