import path from 'node:path'

/**
 * Why a runner would refuse `workDir` as a session's sandbox, judged from the
 * path alone; undefined when the path passes. The rule is the lexical part of
 * runner/sandbox.ts `resolveSandbox`: no NUL byte, and the path resolved
 * against the sandbox base stays inside it. The runner then also follows
 * symlinks on its own disk, which only it can do. The reasons are the
 * runner's, and name no server path.
 *
 * `base` is the sandbox base (`session.work_dir`). A relative path is judged
 * the same whatever the base is; an absolute one only against a known base
 * (without one, it is left to the runner). A leaf module (node:path only),
 * so that the runner could share it.
 */
export function workDirProblem(workDir: string, base?: string): string | undefined {
  if (workDir.includes('\0')) return 'it contains a NUL byte'
  if (path.isAbsolute(workDir) && base === undefined) return undefined
  // Any base will do for a relative path: `..` climbs out of every one the same way.
  const root = path.resolve(base ?? '/sandbox-base')
  if (!isInside(root, path.resolve(root, workDir))) return 'it lies outside the sandbox base'
  return undefined
}

/** Whether `target` is `base` or below it (runner/sandbox.ts `isInside`). */
function isInside(base: string, target: string): boolean {
  const relative = path.relative(base, target)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}
