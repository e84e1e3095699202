/**
 * Bytes of answer text a turn's one-value answer keeps (POST /v1/agent/chat in
 * JSON mode, the chat adapter): past it the answer is cut (at a character
 * boundary) and marked truncated; the turn itself runs to its end and stays
 * whole on the event stream.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024

/** The answer text blocks of a turn joined with blank lines, cut at `max` bytes. */
export class AnswerText {
  readonly #max: number
  #text = ''
  #bytes = 0
  #truncated = false

  constructor(max: number) {
    this.#max = max
  }

  add(block: string): void {
    if (this.#truncated) return
    const piece = this.#text === '' ? block : `\n\n${block}`
    const bytes = Buffer.byteLength(piece)
    if (this.#bytes + bytes <= this.#max) {
      this.#text += piece
      this.#bytes += bytes
      return
    }
    this.#text += cutToBytes(piece, this.#max - this.#bytes)
    this.#bytes = Buffer.byteLength(this.#text)
    this.#truncated = true
  }

  get text(): string {
    return this.#text
  }

  /** `{truncated: true}` when cut, else nothing: spread into the answer. */
  get flag(): { truncated?: true } {
    return this.#truncated ? { truncated: true } : {}
  }
}

/** The longest start of `text` within `bytes` UTF-8 bytes that does not split a character. */
export function cutToBytes(text: string, bytes: number): string {
  if (bytes <= 0) return ''
  // No more characters than bytes; then drop characters until it fits (at most 3 bytes each in UTF-16 terms).
  let cut = text.slice(0, bytes)
  let over = Buffer.byteLength(cut) - bytes
  while (over > 0) {
    cut = cut.slice(0, cut.length - Math.max(1, Math.floor(over / 3)))
    over = Buffer.byteLength(cut) - bytes
  }
  // A lone high surrogate at the end is half a character.
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}
