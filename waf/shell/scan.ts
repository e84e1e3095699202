/** Low-level scanning helpers of the shell parser: matching brackets and quotes, `$'…'` decoding. */

/** Offset just past the close matching the open at `open` (quotes inside are skipped). */
export function matchingClose(src: string, open: number, o: string, c: string): number {
  let depth = 0
  let i = open
  while (i < src.length) {
    const ch = src[i]!
    if (ch === '\\') i += 2
    else if (ch === "'") i = skipTo(src, i + 1, "'")
    else if (ch === '"') i = skipTo(src, i + 1, '"')
    else {
      if (ch === o) depth += 1
      else if (ch === c) {
        depth -= 1
        if (depth === 0) return i + 1
      }
      i += 1
    }
  }
  return src.length
}

/** Offset just past the next unescaped `ch` from `i` (or the end). */
export function skipTo(src: string, i: number, ch: string): number {
  while (i < src.length) {
    if (src[i] === '\\' && ch !== "'") i += 2
    else if (src[i] === ch) return i + 1
    else i += 1
  }
  return src.length
}

/** Decodes a `$'…'` string starting after the opening quote. */
export function ansiC(src: string, i: number): { text: string; end: number } {
  let text = ''
  while (i < src.length && src[i] !== "'") {
    if (src[i] !== '\\') {
      text += src[i]
      i += 1
      continue
    }
    const rest = src.slice(i + 1, i + 10)
    let m: RegExpExecArray | null
    if ((m = /^x([0-9a-fA-F]{1,2})/.exec(rest)) !== null) text += String.fromCharCode(parseInt(m[1]!, 16))
    else if ((m = /^u([0-9a-fA-F]{1,4})/.exec(rest)) !== null) text += String.fromCharCode(parseInt(m[1]!, 16))
    else if ((m = /^U([0-9a-fA-F]{1,8})/.exec(rest)) !== null) text += String.fromCodePoint(Math.min(parseInt(m[1]!, 16), 0x10ffff))
    else if ((m = /^([0-7]{1,3})/.exec(rest)) !== null) text += String.fromCharCode(parseInt(m[1]!, 8))
    else if ((m = /^c(.)/.exec(rest)) !== null) text += String.fromCharCode(m[1]!.charCodeAt(0) & 31)
    else {
      m = /^[\s\S]/.exec(rest)
      const ch = m?.[0] ?? ''
      text += ({ n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' } as Record<string, string>)[ch] ?? ch
    }
    i += 1 + (m?.[0].length ?? 0)
  }
  return { text, end: i + 1 }
}
