import { describe, expect, it, vi } from 'vitest'
import { descendants, environValue, parseStat, sessionRows, type ProcessInfo } from '../../../runner/process/tree.ts'
import { SharedRun } from '../../../runner/process/shared-run.ts'

describe('process table', () => {
  it.each([
    ['42 (bash) S 1 42 42 0 -1', { pid: 42, ppid: 1, pgid: 42, state: 'S', name: 'bash' }],
    ['7 (my (weird) name) R 3 5 5 0', { pid: 7, ppid: 3, pgid: 5, state: 'R', name: 'my (weird) name' }],
    ['9 (a b) Z 2 9 9', { pid: 9, ppid: 2, pgid: 9, state: 'Z', name: 'a b' }],
  ])('stat - %s', (line, expected) => {
    expect(parseStat(line)).toEqual(expected)
  })

  it.each(['', 'garbage', '1 (x'])('stat - "%s" is not a process', (line) => {
    expect(parseStat(line)).toBeUndefined()
  })

  const rows: ProcessInfo[] = [
    { pid: 1, ppid: 0, pgid: 1, state: 'S' },
    { pid: 10, ppid: 1, pgid: 10, state: 'S' },
    { pid: 11, ppid: 10, pgid: 10, state: 'S' },
    { pid: 12, ppid: 11, pgid: 12, state: 'S' }, // a tool in a group of its own
    { pid: 13, ppid: 12, pgid: 12, state: 'S' },
    { pid: 20, ppid: 1, pgid: 20, state: 'S' },
  ]

  it.each([
    [10, [10, 11, 12, 13]],
    [12, [12, 13]],
    [20, [20]],
    [99, []],
  ])('descendants - of %i', (root, expected) => {
    expect([...descendants(rows, root)].sort((a, b) => a - b)).toEqual(expected)
  })
})

describe('environValue', () => {
  const block = (...vars: string[]) => Buffer.from(vars.join('\0') + '\0')
  it.each([
    [block('A=1', 'TAG=abc', 'B=2'), 'abc'],
    [block('TAG=first'), 'first'],
    [block('XTAG=no', 'TAG_X=no'), undefined],
    [block('TAG='), ''],
    [Buffer.from('A=1\0TAG=last-without-nul'), 'last-without-nul'],
    [Buffer.alloc(0), undefined],
  ])('%#', (environ, expected) => {
    expect(environValue(environ, 'TAG')).toBe(expected)
  })
})

describe('sessionRows', () => {
  const rows: ProcessInfo[] = [
    { pid: 10, ppid: 1, pgid: 10, state: 'S', tag: 't1' },
    { pid: 11, ppid: 10, pgid: 10, state: 'S' },
    { pid: 30, ppid: 1, pgid: 30, state: 'S', tag: 't1' }, // left the tree, kept its tag
    { pid: 40, ppid: 1, pgid: 40, state: 'S', tag: 't2' },
  ]
  it.each([
    [10, 't1', [10, 11, 30]],
    [undefined, 't1', [10, 30]],
    [40, 'none', [40]],
    [undefined, 'none', []],
  ])('leader %s, tag %s', (leader, tag, expected) => {
    expect(sessionRows(rows, leader, tag).map((row) => row.pid)).toEqual(expected)
  })
})

describe('SharedRun', () => {
  it('callers during a run share one run after it; a failed run does not stop the next', async () => {
    let runs = 0
    const gates: PromiseWithResolvers<void>[] = []
    const shared = new SharedRun(async () => {
      const run = ++runs
      const gate = Promise.withResolvers<void>()
      gates.push(gate)
      await gate.promise
      if (run === 1) throw new Error('first run fails')
      return run
    })
    const first = shared.get()
    const during = Array.from({ length: 50 }, () => shared.get())
    expect(runs).toBe(1)
    gates[0]!.resolve()
    await expect(first).rejects.toThrow('first run fails')
    await vi.waitFor(() => expect(runs).toBe(2))
    gates[1]!.resolve()
    expect(new Set(await Promise.all(during))).toEqual(new Set([2]))
    const after = shared.get()
    expect(runs).toBe(3)
    gates[2]!.resolve()
    expect(await after).toBe(3)
  })
})
