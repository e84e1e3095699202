import { describe, expect, it } from 'vitest'
import { expandBraces, expandPattern, newExpandContext, MAX_WORDS, type FsView } from '../../../waf/shell/expand.ts'
import { commandViews } from '../../../waf/shell/views.ts'

const TREE: Record<string, string[]> = { '/': ['etc', 'usr', 'tmp'], '/etc': ['passwd', 'shadow', '.hidden'], '/w': ['a.log', 'b.log', 'src'] }
const fs: FsView = { cwd: '/w', list: (dir) => TREE[dir] }

describe('waf shell expansion', () => {
  it.each([
    { pattern: '/{etc,usr}', out: ['/etc', '/usr'] },
    { pattern: 'a{b,c{d,e}}f', out: ['abf', 'acdf', 'acef'] },
    { pattern: '{1..3}', out: ['1', '2', '3'] },
    { pattern: '{a..c}x', out: ['ax', 'bx', 'cx'] },
    { pattern: '{x}', out: ['{x}'] },
    { pattern: '\\{a,b\\}', out: ['\\{a,b\\}'] },
  ])('braces - $pattern', ({ pattern, out }) => {
    expect(expandBraces(pattern)).toEqual(out)
  })

  it('braces - the number of words is bounded', () => {
    expect(expandBraces('{a,b}'.repeat(20)).length).toBe(MAX_WORDS)
  })

  it.each([
    { pattern: '/et?', out: ['/etc'] },
    { pattern: '/[e]tc', out: ['/etc'] },
    { pattern: '/[!u]tc', out: ['/etc'] },
    { pattern: '/etc/*', out: ['/etc/passwd', '/etc/shadow'] },
    { pattern: '/etc/.*', out: ['/etc/.hidden'] },
    { pattern: '/*/sha*', out: ['/etc/shadow'] },
    { pattern: '*.log', out: ['a.log', 'b.log'] },
    { pattern: '/nope*', out: ['/nope*'] },
    { pattern: '/et\\?', out: ['/et?'] },
  ])('globs - $pattern against the filesystem view', ({ pattern, out }) => {
    expect(expandPattern(pattern, newExpandContext(fs, undefined))).toEqual(out)
  })

  it('globs - without a view, the standard root layout is used', () => {
    expect(expandPattern('/et?', newExpandContext(undefined, undefined))).toEqual(['/etc'])
    expect(expandPattern('*.log', newExpandContext(undefined, undefined))).toEqual(['*.log'])
  })

  it('views - quoted braces and globs are not expanded; the written form is kept beside the expanded one', () => {
    expect(commandViews('echo "/et?" \'{a,b}\'', { fs }).parsed).toBe('echo /et? {a,b}')
    expect(commandViews('rm -rf /et?', { fs }).parsed.split('\n')).toEqual(['rm -rf /et?', 'rm -rf /etc'])
  })

  it('views - parameter defaults, functions and sh -c arguments', () => {
    expect(commandViews('rm -rf ${X:-/tmp/x}').parsed).toBe('rm -rf /tmp/x')
    expect(commandViews('X=a; echo ${X:-b} ${Y:+c} ${X:?m}').parsed).toContain('echo a c a')
    expect(commandViews('f(){ rm -rf "$1"; }; f /').parsed.split('\n')).toContain('rm -rf /')
    expect(commandViews('sh -c \'rm -rf "$1"\' _ /').parsed.split('\n')).toContain('rm -rf /')
    // A recursive function is not followed into itself.
    expect(commandViews('f(){ f; }; f').tooComplex).toBe(false)
  })
})
