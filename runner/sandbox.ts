import { mkdir, realpath } from 'node:fs/promises'
import path from 'node:path'
import { ServiceError, sessionToken } from '../contract/mod.ts'

/**
 * Resolves a session's sandbox directory under the base: a relative work_dir
 * is taken inside the base, an absolute one must already lie inside it, none
 * means `<base>/<session token>`. Anything that lands outside — `..`, another
 * absolute path, a symlink pointing out — is rejected. The directory is
 * created when missing.
 */
export async function resolveSandbox(base: string, sessionId: string, requested: string | undefined): Promise<string> {
  await mkdir(base, { recursive: true })
  const realBase = await realpath(base)
  const wanted = requested === undefined || requested === '' ? sessionToken(sessionId) : requested
  if (wanted.includes('\0')) throw rejected(wanted, 'it contains a NUL byte')
  const target = path.resolve(realBase, wanted)
  if (!isInside(realBase, target)) throw rejected(wanted, `it lies outside ${realBase}`)
  // Follow symlinks in the part that exists; only then create the rest.
  const existing = await deepestExisting(target)
  const realExisting = await realpath(existing)
  if (!isInside(realBase, realExisting)) throw rejected(wanted, 'a symlink in it points outside the sandbox base')
  const resolved = path.join(realExisting, path.relative(existing, target))
  await mkdir(resolved, { recursive: true })
  // A symlink could have been created between the check and mkdir; check the result too.
  const final = await realpath(resolved)
  if (!isInside(realBase, final)) throw rejected(wanted, 'a symlink in it points outside the sandbox base')
  return final
}

export function isInside(base: string, target: string): boolean {
  const relative = path.relative(base, target)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
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

function rejected(workDir: string, why: string): ServiceError {
  return new ServiceError('WORK_DIR_REJECTED', `work_dir "${workDir}" is not allowed: ${why}`)
}
