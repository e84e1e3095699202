import { describe, expect, it } from 'vitest'
import { descendants, parseStat, type ProcessInfo } from '../../../runner/process/tree.ts'

describe('process table', () => {
  it.each([
    ['42 (bash) S 1 42 42 0 -1', { pid: 42, ppid: 1, pgid: 42, state: 'S' }],
    ['7 (my (weird) name) R 3 5 5 0', { pid: 7, ppid: 3, pgid: 5, state: 'R' }],
    ['9 (a b) Z 2 9 9', { pid: 9, ppid: 2, pgid: 9, state: 'Z' }],
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
