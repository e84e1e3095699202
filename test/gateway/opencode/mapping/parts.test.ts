import { describe, expect, it } from 'vitest'
import { emptyStats } from '../../../../contract/mod.ts'
import { tokensOf, toolInput, toolTitle } from '../../../../gateway/opencode/mapping/parts.ts'

describe('opencode parts - field helpers', () => {
  it.each([
    { name: 'Bash', input: { command: 'ls -la', description: 'List files' }, expected: 'List files' },
    { name: 'Bash', input: { command: 'echo a\necho b' }, expected: 'echo a' },
    { name: 'Read', input: { file_path: '/srv/a.txt' }, expected: '/srv/a.txt' },
    { name: 'Grep', input: { pattern: 'TODO' }, expected: 'TODO' },
    { name: 'Task', input: {}, expected: 'Task' },
    { name: 'Bash', input: { command: 'x'.repeat(200) }, expected: `${'x'.repeat(119)}…` },
  ])('toolTitle $name $input', ({ name, input, expected }) => {
    expect(toolTitle(name, input)).toBe(expected)
  })

  it.each([
    { input: { a: 1 }, expected: { a: 1 } },
    { input: undefined, expected: {} },
    { input: null, expected: {} },
    { input: 'text', expected: { input: 'text' } },
    { input: [1, 2], expected: { input: [1, 2] } },
  ])('toolInput $input', ({ input, expected }) => {
    expect(toolInput(input)).toEqual(expected)
  })

  it('tokensOf - OpenCode token fields from the turn stats', () => {
    const stats = { ...emptyStats(), input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 7, cache_creation_input_tokens: 1 }
    expect(tokensOf(stats)).toEqual({ total: 23, input: 10, output: 5, reasoning: 0, cache: { read: 7, write: 1 } })
  })
})
