import { describe, expect, it } from 'vitest'
import { subjectMatches } from '../../bus/mod.ts'

// [pattern, subject, matches] — NATS rules: `*` is one token, `>` one or more trailing tokens.
const cases: Array<[string, string, boolean]> = [
  ['a.b', 'a.b', true],
  ['a.b', 'a.c', false],
  ['a.b', 'a', false],
  ['a.b', 'a.b.c', false],
  ['a', 'a', true],
  ['a', 'ab', false],
  ['*', 'a', true],
  ['*', 'a.b', false],
  ['a.*', 'a.b', true],
  ['a.*', 'a', false],
  ['a.*', 'a.b.c', false],
  ['*.b', 'a.b', true],
  ['*.b', 'a.c', false],
  ['a.*.c', 'a.b.c', true],
  ['a.*.c', 'a.c', false],
  ['*.*', 'a.b', true],
  ['*.*', 'a', false],
  ['>', 'a', true],
  ['>', 'a.b.c', true],
  ['a.>', 'a.b', true],
  ['a.>', 'a.b.c.d', true],
  ['a.>', 'a', false],
  ['a.>', 'b.c', false],
  ['*.>', 'a.b', true],
  ['*.>', 'a', false],
  ['a.*.>', 'a.b.c', true],
  ['a.*.>', 'a.b', false],
  // `>` is only a wildcard as the last token; elsewhere the pattern matches nothing.
  ['a.>.c', 'a.b.c', false],
  ['>.a', 'b.a', false],
  // Wildcards are whole tokens only.
  ['a*', 'ab', false],
  ['a.b*', 'a.bc', false],
]

describe('subjectMatches', () => {
  it.each(cases)('subjects - %s against %s is %s', (pattern, subject, matches) => {
    expect(subjectMatches(pattern, subject)).toBe(matches)
  })
})
