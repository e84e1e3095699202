import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { chunkMessage, codePointLength } from '../../../gateway/chat/chunker.ts'

const LIMIT = 5000
const PREFIX = /^\[(\d+)\/(\d+)\] /

/** The text of each part without its `[i/n] ` prefix, checking the numbering on the way. */
function bodies(parts: string[], separator = ' '): string[] {
  if (parts.length === 1) return parts
  return parts.map((part, i) => {
    const prefix = `[${i + 1}/${parts.length}]${separator}`
    expect(part.startsWith(prefix), `part ${i + 1} starts with ${JSON.stringify(prefix)}`).toBe(true)
    return part.slice(prefix.length)
  })
}

function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)
}

describe('chat chunker', () => {
  it('chunker - a short reply is one part without a prefix', () => {
    expect(chunkMessage('hello\nworld', { limit: LIMIT })).toEqual(['hello\nworld'])
  })

  it('chunker - exactly 5,000 characters is one part', () => {
    const text = 'a'.repeat(5000)
    expect(chunkMessage(text, { limit: LIMIT })).toEqual([text])
  })

  it('chunker - 5,001 characters are two numbered parts within the limit', () => {
    const text = 'a'.repeat(5001)
    const parts = chunkMessage(text, { limit: LIMIT })
    expect(parts).toEqual([`[1/2] ${'a'.repeat(4994)}`, `[2/2] ${'a'.repeat(7)}`])
    for (const part of parts) expect(codePointLength(part)).toBeLessThanOrEqual(LIMIT)
  })

  it('chunker - one 12,000-character line is cut by characters into full parts', () => {
    const text = Array.from({ length: 12_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('')
    const parts = chunkMessage(text, { limit: LIMIT })
    expect(parts.map((part) => part.length)).toEqual([5000, 5000, 6 + 12_000 - 2 * 4994])
    expect(bodies(parts).join('')).toBe(text)
  })

  it('chunker - surrogate pairs at the cut stay whole and count as one character', () => {
    // 4,993 ASCII then emoji: the 4,994th code point of the first part's room is an emoji.
    const text = 'a'.repeat(4993) + '😀'.repeat(10)
    const parts = chunkMessage(text, { limit: LIMIT })
    expect(parts).toHaveLength(2)
    expect(parts[0]).toBe(`[1/2] ${'a'.repeat(4993)}😀`)
    expect(parts[1]).toBe(`[2/2] ${'😀'.repeat(9)}`)
    for (const part of parts) expect(hasLoneSurrogate(part)).toBe(false)
  })

  it('chunker - 5,000 emoji are one part (5,000 code points, 10,000 UTF-16 units)', () => {
    const text = '👍'.repeat(5000)
    expect(chunkMessage(text, { limit: LIMIT })).toEqual([text])
    const parts = chunkMessage(text + '👍', { limit: LIMIT })
    expect(parts.map(codePointLength)).toEqual([5000, 6 + 7])
    expect(parts.every((part) => !hasLoneSurrogate(part))).toBe(true)
  })

  it('chunker - multi-byte text (CJK, accents, emoji) is counted in code points', () => {
    const line = '漢字かなé👩‍💻'
    const text = Array.from({ length: 1000 }, () => line).join('\n')
    const parts = chunkMessage(text, { limit: LIMIT })
    for (const part of parts) {
      expect(codePointLength(part)).toBeLessThanOrEqual(LIMIT)
      expect(hasLoneSurrogate(part)).toBe(false)
    }
    // Lines are short, so none is cut: every line arrives whole.
    for (const body of bodies(parts)) for (const got of body.split('\n')) expect(got).toBe(line)
  })

  it('chunker - many short lines are merged greedily and never cut', () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${String(i).padStart(4, '0')}`)
    const parts = chunkMessage(lines.join('\n'), { limit: LIMIT })
    const got = bodies(parts)
    expect(got.flatMap((body) => body.split('\n'))).toEqual(lines)
    for (const [i, part] of parts.entries()) {
      expect(codePointLength(part)).toBeLessThanOrEqual(LIMIT)
      // Greedy: the next part's first line would not have fitted.
      const next = got[i + 1]
      if (next !== undefined) expect(codePointLength(part) + 1 + next.split('\n')[0]!.length).toBeGreaterThan(LIMIT)
    }
  })

  it('chunker - ten or more parts get a wider prefix, still inside the limit', () => {
    const parts = chunkMessage('x'.repeat(60_000), { limit: LIMIT })
    expect(parts).toHaveLength(13)
    expect(parts[0]!.startsWith('[1/13] ')).toBe(true)
    expect(parts[12]!.startsWith('[13/13] ')).toBe(true)
    for (const part of parts) expect(codePointLength(part)).toBeLessThanOrEqual(LIMIT)
    expect(bodies(parts).join('')).toBe('x'.repeat(60_000))
  })

  it('chunker - a line joins the current part when it fits; a cut line starts a new part', () => {
    // Limit 40 leaves 34 after `[i/n] `: `short` cannot take the long line's first piece,
    // the long line is cut 34 + 34 + 2, and `tail` joins the last piece.
    const parts = chunkMessage(['short', 'x'.repeat(70), 'tail'].join('\n'), { limit: 40 })
    expect(parts).toEqual(['[1/4] short', `[2/4] ${'x'.repeat(34)}`, `[3/4] ${'x'.repeat(34)}`, '[4/4] xx\ntail'])
  })

  it('chunker - lines that fill a part exactly, prefix included, stay together', () => {
    const parts = chunkMessage(['a'.repeat(16), 'b'.repeat(17), 'c'.repeat(10)].join('\n'), { limit: 40 })
    expect(parts).toEqual([`[1/2] ${'a'.repeat(16)}\n${'b'.repeat(17)}`, '[2/2] cccccccccc'])
    expect(parts[0]).toHaveLength(40)
  })

  it.each([
    { name: 'blank text', text: '  \n\n ', parts: [] },
    { name: 'CRLF line ends', text: 'a\r\nb', parts: ['a\nb'] },
    { name: 'trailing blank lines', text: 'a\n\n\n', parts: ['a'] },
    { name: 'leading blank lines', text: '\n\n  code', parts: ['  code'] },
  ])('chunker - $name', ({ text, parts }) => {
    expect(chunkMessage(text, { limit: LIMIT })).toEqual(parts)
  })

  it('chunker - markdown separator puts the prefix on a line of its own', () => {
    const parts = chunkMessage('# Title\n' + 'y'.repeat(60), { limit: 40, separator: '\n' })
    expect(parts[0]).toBe('[1/3]\n# Title')
    for (const part of parts) expect(codePointLength(part)).toBeLessThanOrEqual(40)
  })

  it('chunker - a limit with no room for text after the prefix is a RangeError', () => {
    expect(() => chunkMessage('abcdefghij', { limit: 6 })).toThrow(RangeError)
  })

  it('chunker - properties: within the limit, numbered, no lone surrogate, nothing lost but newlines', () => {
    const char = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('a', 'b', ' ', '.', '漢', 'é') },
      { weight: 2, arbitrary: fc.constant('\n') },
      { weight: 2, arbitrary: fc.constantFrom('😀', '👩‍💻', '🇫🇷', '𝄞') },
    )
    fc.assert(
      fc.property(
        fc.array(char, { maxLength: 400 }).map((chars) => chars.join('')),
        fc.integer({ min: 12, max: 80 }),
        (text, limit) => {
          const parts = chunkMessage(text, { limit })
          const normalized = text.replace(/^(?:[ \t]*\n)+/, '').trimEnd()
          if (normalized.trim() === '') return parts.length === 0
          for (const part of parts) {
            expect(codePointLength(part)).toBeLessThanOrEqual(limit)
            expect(hasLoneSurrogate(part)).toBe(false)
          }
          const texts =
            parts.length === 1 ? parts : parts.map((part, i) => part.replace(PREFIX, (m, a, b) => (Number(a) === i + 1 && Number(b) === parts.length ? '' : m)))
          expect(texts.join('').replace(/\n/g, '')).toBe(normalized.replace(/\n/g, ''))
          return true
        },
      ),
      { numRuns: 500 },
    )
  })
})
