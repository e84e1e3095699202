import path from 'node:path'
import { ServiceError } from './errors.ts'

/**
 * The lexical rule for a session's `work_dir`, the same wherever it is
 * judged: the gateway refuses a bad one when a session is created, the runner
 * when it resolves the sandbox (and then also follows symlinks on its own
 * disk, which only it can do). Why the path is refused, or undefined when it
 * passes: no NUL byte, and resolved against the sandbox base it stays inside.
 * A relative path is judged the same whatever the base is; an absolute one
 * only against a known base (without one, it is left to the runner).
 */
export function workDirProblem(workDir: string, base?: string): string | undefined {
  if (workDir.includes('\0')) return 'it contains a NUL byte'
  if (path.isAbsolute(workDir) && base === undefined) return undefined
  // Any base will do for a relative path: `..` climbs out of every one the same way.
  const root = path.resolve(base ?? '/sandbox-base')
  if (!isInside(root, path.resolve(root, workDir))) return 'it lies outside the sandbox base'
  return undefined
}

/**
 * The operator's root (`session.work_dir_roots`) an absolute `work_dir` lies in, used as it is;
 * undefined for a relative path or one in no root. Lexical: the runner follows symlinks after.
 */
export function workDirRoot(workDir: string, roots: readonly string[]): string | undefined {
  if (!path.isAbsolute(workDir) || workDir.includes('\0')) return undefined
  const target = path.resolve(workDir)
  return roots.find((root) => isInside(path.resolve(root), target))
}

/** Whether `target` is `base` or below it. */
export function isInside(base: string, target: string): boolean {
  const relative = path.relative(base, target)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/** The error of a refused `work_dir`; `why` names no server path (it reaches clients). */
export function workDirRejected(workDir: string, why: string): ServiceError {
  return new ServiceError('WORK_DIR_REJECTED', `work_dir "${workDir}" is not allowed: ${why}`)
}
