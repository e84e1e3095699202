import { describe, expect, it } from 'vitest'
import { nestedQuantifierProblem } from '../../waf/regex-safety.ts'

describe('waf regex safety', () => {
  it.each([
    { pattern: '(a+)+', unsafe: true },
    { pattern: '(a*)*b', unsafe: true },
    { pattern: '(?:x|y+)*', unsafe: true },
    { pattern: '(a{2,})+', unsafe: true },
    { pattern: '((a+)b)*', unsafe: true },
    { pattern: '(a+){0,8}', unsafe: false },
    { pattern: '(ab)+', unsafe: false },
    { pattern: '(a+)?', unsafe: false },
    { pattern: '[(+)]+', unsafe: false },
    { pattern: String.raw`\(a+\)+`, unsafe: false },
    { pattern: '(a{1,3})+', unsafe: false },
    { pattern: '(?=a+)+', unsafe: true },
  ])('safety - $pattern unsafe: $unsafe', ({ pattern, unsafe }) => {
    expect(nestedQuantifierProblem(pattern) !== undefined).toBe(unsafe)
  })
})
