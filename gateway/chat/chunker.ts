/**
 * Splits a reply into messages of at most `limit` Unicode code points (spec
 * §4.4, §8). Lines first; a line longer than the room of one part is cut by
 * code points (a surrogate pair is one code point, so it is never cut); the
 * pieces are then merged greedily, a piece joining the current part when it
 * fits, else starting the next. With more than one part, part i of n starts
 * with `[i/n]` and a separator, counted inside the limit. Pure.
 */

export interface ChunkOptions {
  /** Most code points per part, prefix included. */
  limit: number
  /** Between the `[i/n]` prefix and the text; default one space. */
  separator?: string
}

/** Length in code points (what the limit counts). */
export function codePointLength(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

/** The parts of `text`, in order; none for blank text. Throws RangeError when the limit leaves no room for text. */
export function chunkMessage(text: string, options: ChunkOptions): string[] {
  const { limit } = options
  const separator = options.separator ?? ' '
  // Blank lines at either end carry nothing; trailing spaces neither.
  const body = text
    .replace(/\r\n/g, '\n')
    .replace(/^(?:[ \t]*\n)+/, '')
    .trimEnd()
  if (body.trim() === '') return []
  if (codePointLength(body) <= limit) return [body]

  const lines = body.split('\n')
  // The prefix grows with the digits of n, which shrinks the room, which can
  // raise n: settle on a digit count that holds the result.
  for (let digits = 1; ; digits++) {
    const room = limit - prefixLength(digits, separator)
    if (room < 1) throw new RangeError(`chunk limit ${limit} leaves no room for text after a ${digits}-digit [i/n] prefix`)
    const parts = pack(lines, room)
    if (String(parts.length).length <= digits) return parts.map((part, i) => `[${i + 1}/${parts.length}]${separator}${part}`)
  }
}

/** Code points of `[n/n]` + separator when n has `digits` digits (every i ≤ n takes at most that). */
function prefixLength(digits: number, separator: string): number {
  return 2 * digits + 3 + codePointLength(separator)
}

/** Greedy merge of the lines (cut to `room` first) into parts of at most `room` code points. */
function pack(lines: string[], room: number): string[] {
  const parts: string[] = []
  let current = ''
  let used = 0
  for (const line of lines) {
    for (const piece of cut(line, room)) {
      // A newline goes between lines; the pieces of one cut line follow each other directly.
      const join = piece.first ? 1 : 0
      if (used > 0 && used + join + piece.length > room) {
        parts.push(current.replace(/\n+$/, ''))
        current = ''
        used = 0
      }
      if (used === 0) {
        // A part never starts with a blank line (one at a part boundary is dropped).
        if (piece.length === 0) continue
        current = piece.text
        used = piece.length
      } else {
        current += (join === 1 ? '\n' : '') + piece.text
        used += join + piece.length
      }
    }
  }
  if (used > 0) parts.push(current.replace(/\n+$/, ''))
  return parts
}

interface Piece {
  text: string
  /** Length in code points. */
  length: number
  /** True for the first piece of a line. */
  first: boolean
}

/** A line as pieces of at most `room` code points. */
function cut(line: string, room: number): Piece[] {
  const points = Array.from(line)
  if (points.length <= room) return [{ text: line, length: points.length, first: true }]
  const pieces: Piece[] = []
  for (let start = 0; start < points.length; start += room) {
    const slice = points.slice(start, start + room)
    pieces.push({ text: slice.join(''), length: slice.length, first: start === 0 })
  }
  return pieces
}
