import { describe, expect, it } from 'vitest'
import { workDirProblem } from '../../contract/work-dir.ts'

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
