/**
 * Splits a child's stdout byte stream into lines. Pure: no I/O, no timers.
 *
 * Lines are cut on the `\n` byte before decoding, so a multi-byte UTF-8
 * character split across chunks is decoded whole (0x0A never occurs inside a
 * multi-byte sequence). A trailing `\r` is removed. Pieces of a line are kept
 * as a list and joined once when the line ends, so a long line costs linear
 * time; a line longer than `maxLineBytes` is dropped as soon as it passes the
 * limit (memory stays bounded) and reported through `onOverlong` when it ends.
 */

export interface LineSplitterOptions {
  /** Longest line kept, in bytes, without its `\n` / `\r\n`. */
  maxLineBytes: number
  /** Called once per dropped line, when it ends, with its full length in bytes. */
  onOverlong?: (bytes: number) => void
}

/** Default limit: a turn's result line repeats its last text, so allow a lot. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

const LF = 0x0a
const CR = 0x0d

/** Feeds stdout chunks in, gets complete lines out. */
export class LineSplitter {
  readonly #max: number
  readonly #onOverlong: ((bytes: number) => void) | undefined
  /** Pieces of the current, unfinished line. */
  #pending: Buffer[] = []
  #pendingBytes = 0
  /** True while skipping the rest of an over-long line. */
  #dropping = false
  /** Bytes of the over-long line seen so far, and the last of them. */
  #droppedBytes = 0
  #droppedLast = -1

  constructor(options: LineSplitterOptions) {
    const max = options.maxLineBytes
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${String(max)}`)
    }
    this.#max = max
    this.#onOverlong = options.onOverlong
  }

  /** Adds a chunk; returns the lines it completed (possibly none). */
  push(chunk: Uint8Array): string[] {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const lines: string[] = []
    let start = 0
    while (start < buf.length) {
      const nl = buf.indexOf(LF, start)
      if (nl === -1) {
        this.#keep(buf, start, buf.length)
        break
      }
      this.#finish(buf, start, nl, lines)
      start = nl + 1
    }
    return lines
  }

  /** Ends the stream: returns the last line if it had no newline. */
  end(): string[] {
    const lines: string[] = []
    if (this.#dropping || this.#pendingBytes > 0) this.#finish(Buffer.alloc(0), 0, 0, lines)
    return lines
  }

  /** Appends buf[from, to) to the unfinished line, or drops it past the limit. */
  #keep(buf: Buffer, from: number, to: number): void {
    const n = to - from
    if (n === 0) return
    if (this.#dropping) {
      this.#droppedBytes += n
      this.#droppedLast = buf[to - 1] ?? -1
      return
    }
    // One extra byte of slack: the line may still end with `\r\n`.
    if (this.#pendingBytes + n > this.#max + 1) {
      this.#dropping = true
      this.#droppedBytes = this.#pendingBytes + n
      this.#droppedLast = buf[to - 1] ?? -1
      this.#pending = []
      this.#pendingBytes = 0
      return
    }
    // Copy: the caller may reuse its buffer after push() returns.
    this.#pending.push(Buffer.from(buf.subarray(from, to)))
    this.#pendingBytes += n
  }

  /** Ends the current line with buf[from, to) as its last piece. */
  #finish(buf: Buffer, from: number, to: number, lines: string[]): void {
    if (this.#dropping) {
      const last = to > from ? buf[to - 1] : this.#droppedLast
      const bytes = this.#droppedBytes + (to - from)
      this.#dropping = false
      this.#droppedBytes = 0
      this.#droppedLast = -1
      // Reported without the `\r` of a `\r\n` ending, like kept lines.
      this.#onOverlong?.(last === CR ? bytes - 1 : bytes)
      return
    }
    let line: Buffer
    if (this.#pendingBytes === 0) {
      line = buf.subarray(from, to)
    } else {
      this.#pending.push(buf.subarray(from, to))
      line = Buffer.concat(this.#pending, this.#pendingBytes + (to - from))
      this.#pending = []
      this.#pendingBytes = 0
    }
    let length = line.length
    if (length > 0 && line[length - 1] === CR) length--
    if (length > this.#max) {
      this.#onOverlong?.(length)
      return
    }
    lines.push(line.toString('utf8', 0, length))
  }
}
