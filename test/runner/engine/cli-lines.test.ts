import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { readCliLines, readLines } from '../../../runner/engine/cli-lines.ts'

/** Feeds `chunks` into a stream, then ends it. */
function feed(stream: PassThrough, chunks: string[]): void {
  for (const chunk of chunks) stream.write(Buffer.from(chunk))
  stream.end()
}

describe("cli lines - a CLI's output read as lines", () => {
  it.each<[string, string[], string[]]>([
    ['lines cut across chunks', ['a\nb', 'c\n'], ['a', 'bc']],
    ['a last line without a newline comes at the end', ['a\nlast'], ['a', 'last']],
    ['\\r\\n endings', ['a\r\nb\r\n'], ['a', 'b']],
    ['nothing', [], []],
  ])('readLines - %s', async (_name, chunks, expected) => {
    const stream = new PassThrough()
    const lines: string[] = []
    const read = readLines(stream, { maxLineBytes: 100 }, (line) => lines.push(line))
    feed(stream, chunks)
    await read
    expect(lines).toEqual(expected)
  })

  it('readLines - a stream that is destroyed without ending still hands over its last line', async () => {
    const stream = new PassThrough()
    const lines: string[] = []
    const read = readLines(stream, { maxLineBytes: 100 }, (line) => lines.push(line))
    stream.write('a\ncut')
    await new Promise((resolve) => setImmediate(resolve))
    stream.destroy()
    await read
    expect(lines).toEqual(['a', 'cut'])
  })

  it("readCliLines - stdout lines, over-long ones reported, stderr lines apart; stdout's end after its last line; resolves when both ended", async () => {
    const child = { stdout: new PassThrough(), stderr: new PassThrough() }
    const seen: string[] = []
    const read = readCliLines(child, {
      maxLineBytes: 4,
      onLine: (line) => seen.push(`out:${line}`),
      onOverlong: (bytes) => seen.push(`overlong:${bytes}`),
      onStderr: (line) => seen.push(`err:${line}`),
      onStdoutEnd: () => seen.push('end'),
    })
    let done = false
    void read.then(() => (done = true))
    feed(child.stdout, ['one\ntoo long\ntwo'])
    await new Promise((resolve) => setImmediate(resolve))
    // An over-long line is reported as it ends, before the kept lines of the same chunk are handed over (line-splitter.ts).
    expect(seen.filter((entry) => !entry.startsWith('overlong:'))).toEqual(['out:one', 'out:two', 'end'])
    expect(seen).toContain('overlong:8')
    expect(done).toBe(false)
    feed(child.stderr, ['warning'])
    await read
    expect(seen.at(-1)).toBe('err:warning')
  })
})
