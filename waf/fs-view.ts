import { readdirSync } from 'node:fs'
import path from 'node:path'
import type { FsView } from './shell/expand.ts'

/**
 * The real filesystem as the WAF's glob expansion sees it (`rm -rf /et?` →
 * `/etc`): directory listings of the runner's host, one view per checked
 * call, each directory read once. The expansion bounds how many directories
 * one input may read (expand.ts MAX_LISTINGS). An unreadable directory has no
 * entries to offer, and bash would leave such a glob as written too.
 */
export function hostFsView(cwd: string | undefined): FsView {
  const cache = new Map<string, readonly string[] | undefined>()
  const view: FsView = {
    list(dir) {
      if (!cache.has(dir)) {
        let names: string[] | undefined
        try {
          names = readdirSync(dir)
        } catch {
          names = undefined
        }
        cache.set(dir, names)
      }
      return cache.get(dir)
    },
  }
  if (cwd !== undefined && path.isAbsolute(cwd)) view.cwd = cwd
  return view
}
