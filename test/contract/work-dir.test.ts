import { describe, expect, it } from 'vitest'
import { workDirProblem, workDirRoot } from '../../contract/work-dir.ts'

const OUTSIDE = 'it lies outside the sandbox base'

describe('work_dir - the one rule, judged from the path alone', () => {
  it.each([
    { workDir: 'proj', base: '/srv/sessions', problem: undefined },
    { workDir: 'team/project', base: '/srv/sessions', problem: undefined },
    { workDir: 'a/../b', base: '/srv/sessions', problem: undefined },
    { workDir: '.', base: '/srv/sessions', problem: undefined },
    { workDir: '', base: '/srv/sessions', problem: undefined },
    { workDir: '/srv/sessions/proj', base: '/srv/sessions', problem: undefined },
    { workDir: '/srv/sessions/../sessions/proj', base: '/srv/sessions', problem: undefined },
    { workDir: '..', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: '../..', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: '../outside', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: 'a/../../b', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: '../sessions-other', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: '/etc', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: '/srv/sessions-other/x', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: '/srv/sessions/../x', base: '/srv/sessions', problem: OUTSIDE },
    { workDir: 'proj\0x', base: '/srv/sessions', problem: 'it contains a NUL byte' },
    // Without a known base: relative paths are judged all the same, absolute ones are left to the runner.
    { workDir: '../..', base: undefined, problem: OUTSIDE },
    { workDir: 'a/../../b', base: undefined, problem: OUTSIDE },
    { workDir: 'proj', base: undefined, problem: undefined },
    { workDir: '/etc', base: undefined, problem: undefined },
    { workDir: '/x\0', base: undefined, problem: 'it contains a NUL byte' },
  ])('$workDir under $base → $problem', ({ workDir, base, problem }) => {
    expect(workDirProblem(workDir, base)).toBe(problem)
  })
})

describe("work_dir - the operator's roots for absolute paths", () => {
  const roots = ['/tmp', '/srv/projects/']
  it.each([
    { workDir: '/tmp/demo', root: '/tmp' },
    { workDir: '/tmp', root: '/tmp' },
    { workDir: '/srv/projects/a/b', root: '/srv/projects/' },
    { workDir: '/tmp/../etc', root: undefined },
    { workDir: '/tmpx/demo', root: undefined },
    { workDir: '/etc', root: undefined },
    { workDir: 'tmp/demo', root: undefined },
    { workDir: '/tmp/x\0', root: undefined },
  ])('$workDir → $root', ({ workDir, root }) => {
    expect(workDirRoot(workDir, roots)).toBe(root)
  })

  it('no roots: no absolute path is taken as it is', () => {
    expect(workDirRoot('/tmp/demo', [])).toBeUndefined()
  })
})
