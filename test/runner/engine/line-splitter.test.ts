import { describe, expect, it } from 'vitest'
import { LineSplitter } from '../../../runner/engine/line-splitter.ts'

/** Feeds the chunks, then end(); returns every line and every overlong report. */
function split(chunks: (string | Buffer)[], maxLineBytes = 1024): { lines: string[]; dropped: number[] } {
  const dropped: number[] = []
  const splitter = new LineSplitter({ maxLineBytes, onOverlong: (bytes) => dropped.push(bytes) })
  const lines: string[] = []
  for (const chunk of chunks) lines.push(...splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk))
  lines.push(...splitter.end())
  return { lines, dropped }
}

const euro = Buffer.from('€') // 3 bytes: e2 82 ac
const smile = Buffer.from('😀') // 4 bytes

describe('line-splitter', () => {
  it.each([
    { name: 'one line', chunks: ['a\n'], lines: ['a'] },
    { name: 'several lines in one chunk', chunks: ['a\nb\nc\n'], lines: ['a', 'b', 'c'] },
    { name: 'a line across chunks', chunks: ['ab', 'cd', 'e\n'], lines: ['abcde'] },
    { name: 'CRLF endings', chunks: ['a\r\nb\r\n'], lines: ['a', 'b'] },
    { name: 'CR and LF in different chunks', chunks: ['a\r', '\nb\n'], lines: ['a', 'b'] },
    { name: 'a lone CR inside a line is kept', chunks: ['a\rb\n'], lines: ['a\rb'] },
    { name: 'empty lines are kept', chunks: ['\n\na\n'], lines: ['', '', 'a'] },
    { name: 'final line without newline is flushed by end()', chunks: ['a\nb'], lines: ['a', 'b'] },
    { name: 'final line with only CR', chunks: ['a\r'], lines: ['a'] },
    { name: 'nothing', chunks: [], lines: [] },
    { name: 'empty chunks', chunks: ['', 'a', '', '\n', ''], lines: ['a'] },
    { name: 'a 3-byte character split 1+2', chunks: [euro.subarray(0, 1), Buffer.concat([euro.subarray(1), Buffer.from('\n')])], lines: ['€'] },
    { name: 'a 4-byte character split byte by byte', chunks: [...smile].map((b) => Buffer.from([b])).concat(Buffer.from('\n')), lines: ['😀'] },
    { name: 'a multi-byte character split before end()', chunks: [Buffer.from('x'), smile.subarray(0, 2), smile.subarray(2)], lines: ['x😀'] },
  ])('splits: $name', ({ chunks, lines }) => {
    expect(split(chunks)).toEqual({ lines, dropped: [] })
  })

  it.each([
    { name: 'a line at the limit is kept', chunks: ['abcd\n'], max: 4, lines: ['abcd'], dropped: [] },
    { name: 'a line at the limit with CRLF is kept', chunks: ['abcd\r\n'], max: 4, lines: ['abcd'], dropped: [] },
    { name: 'one byte over in one chunk', chunks: ['abcde\nok\n'], max: 4, lines: ['ok'], dropped: [5] },
    { name: 'over the limit across chunks', chunks: ['ab', 'cd', 'ef', 'gh\nok\n'], max: 4, lines: ['ok'], dropped: [8] },
    { name: 'over the limit with CRLF across chunks', chunks: ['abcdefg', 'h\r', '\nok\n'], max: 4, lines: ['ok'], dropped: [8] },
    { name: 'over the limit at end()', chunks: ['ok\nabcdefgh'], max: 4, lines: ['ok'], dropped: [8] },
    { name: 'two over-long lines', chunks: ['abcdef\nghijkl\nmn\n'], max: 4, lines: ['mn'], dropped: [6, 6] },
    { name: 'limit counts bytes, not characters', chunks: ['€€\n€\n'], max: 4, lines: ['€'], dropped: [6] },
  ])('limits: $name', ({ chunks, max, lines, dropped }) => {
    expect(split(chunks, max)).toEqual({ lines, dropped })
  })

  it('line-splitter - keeps working after end()', () => {
    const splitter = new LineSplitter({ maxLineBytes: 10 })
    expect(splitter.push(Buffer.from('a'))).toEqual([])
    expect(splitter.end()).toEqual(['a'])
    expect(splitter.end()).toEqual([])
    expect(splitter.push(Buffer.from('b\n'))).toEqual(['b'])
  })

  it('line-splitter - does not keep references to the caller buffer', () => {
    const splitter = new LineSplitter({ maxLineBytes: 10 })
    const chunk = Buffer.from('abc')
    splitter.push(chunk)
    chunk.fill(0x7a) // a caller reusing its buffer
    expect(splitter.push(Buffer.from('\n'))).toEqual(['abc'])
  })

  it('line-splitter - accepts plain Uint8Array chunks', () => {
    const splitter = new LineSplitter({ maxLineBytes: 10 })
    const bytes = new TextEncoder().encode('xxhé\n').subarray(2)
    expect(splitter.push(bytes)).toEqual(['hé'])
  })

  it('line-splitter - rejects a bad limit', () => {
    expect(() => new LineSplitter({ maxLineBytes: 0 })).toThrow(RangeError)
    expect(() => new LineSplitter({ maxLineBytes: Number.NaN })).toThrow(RangeError)
  })

  it('line-splitter - a 10 MB line in 64 KB chunks is linear', () => {
    const size = 10 * 1024 * 1024
    const body = Buffer.alloc(size, 'é') // 2-byte characters, split at odd chunk edges
    const dropped: number[] = []
    const splitter = new LineSplitter({ maxLineBytes: 16 * 1024 * 1024, onOverlong: (n) => dropped.push(n) })
    const started = performance.now()
    const lines: string[] = []
    for (let i = 0; i < size; i += 65_537) lines.push(...splitter.push(body.subarray(i, Math.min(size, i + 65_537))))
    lines.push(...splitter.push(Buffer.from('\nnext\n')))
    const elapsed = performance.now() - started
    expect(dropped).toEqual([])
    expect(lines).toHaveLength(2)
    expect(lines[0]).toHaveLength(size / 2)
    expect(lines[0]?.startsWith('éé')).toBe(true)
    expect(lines[1]).toBe('next')
    expect(elapsed).toBeLessThan(2000)
  })

  it('line-splitter - a 10 MB line over the limit is dropped without buffering it', () => {
    const dropped: number[] = []
    const splitter = new LineSplitter({ maxLineBytes: 1024, onOverlong: (n) => dropped.push(n) })
    const chunk = Buffer.alloc(64 * 1024, 'x')
    for (let i = 0; i < 160; i++) expect(splitter.push(chunk)).toEqual([])
    expect(splitter.push(Buffer.from('\nok\n'))).toEqual(['ok'])
    expect(dropped).toEqual([160 * 64 * 1024])
  })
})
