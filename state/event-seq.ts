const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/**
 * The top-level `seq` of one event's JSON text, found without parsing the rest: a stored event's
 * text goes to clients as it is, and a read needs only its sequence (a scan that makes no object,
 * a fraction of JSON.parse's cost on an answer's text). Undefined when the event has none (the controller's SANDBOX_*
 * errors). Throws a SyntaxError when the text is not a JSON object or its `seq` is not a positive
 * integer, as parseEvent does; the rest of the text is not checked. The last `seq` counts, as in
 * JSON.parse. A key written with escapes (`"s\u0065q"`), which JSON.stringify never writes, is
 * not seen: that event passes for one without a sequence. Pure.
 */
export function eventSeq(json: string): number | undefined {
  let i = skipSpace(json, 0)
  if (json.charCodeAt(i) !== OPEN_BRACE) throw new SyntaxError('an event is a JSON object')
  let depth = 0
  let seq: number | undefined
  for (; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(json, i)
      // A string at the object's own level is one of its keys when a colon follows it.
      if (depth === 1 && end === i + 4 && json.startsWith('seq', i + 1)) {
        const colon = skipSpace(json, end + 1)
        if (json.charCodeAt(colon) === COLON) seq = positiveInteger(json, skipSpace(json, colon + 1))
      }
      i = end
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
  }
  return seq
}

/** The index of the quote that closes the string opened at `start`: the first one not escaped. */
function stringEnd(json: string, start: number): number {
  for (let quote = json.indexOf('"', start + 1); quote !== -1; quote = json.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (json.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote
  }
  throw new SyntaxError("the event's JSON ends inside a string")
}

/** The JSON number at `start`, which must be a positive safe integer. */
function positiveInteger(json: string, start: number): number {
  let end = start
  while (end < json.length && isNumberChar(json.charCodeAt(end))) end++
  const token = json.slice(start, end)
  const value = JSON_NUMBER.test(token) ? Number(token) : Number.NaN
  if (!Number.isSafeInteger(value) || value <= 0) throw new SyntaxError(`the event's seq is not a positive integer: ${json.slice(start, start + 20)}`)
  return value
}

/** 0-9 . - + e E */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d || c === 0x2b || c === 0x65 || c === 0x45
}

function skipSpace(json: string, from: number): number {
  let i = from
  while (i < json.length && json.charCodeAt(i) <= 0x20) i++
  return i
}
