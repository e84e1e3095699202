import type { Readable } from 'node:stream'
import { LineSplitter, type LineSplitterOptions } from './line-splitter.ts'

/** Longest stderr line kept: stderr is read by people (the log, the reason a CLI would not start). */
const STDERR_MAX_LINE_BYTES = 64 * 1024

/** Where a CLI's output goes, line by line. */
export interface CliLines {
  /** Longest stdout line kept; a longer one is dropped and reported (onOverlong). */
  maxLineBytes: number
  /** Each line the CLI printed on stdout. */
  onLine(line: string): void
  /** A stdout line longer than `maxLineBytes` was dropped. */
  onOverlong(bytes: number): void
  /** Each line the CLI printed on stderr. */
  onStderr(line: string): void
  /** Stdout ended, after its last line: nothing more comes from the CLI. */
  onStdoutEnd?(): void
}

/** Reads a CLI's stdout and stderr as lines; resolves once both ended and every line was handed over. */
export async function readCliLines(child: { stdout: Readable; stderr: Readable }, lines: CliLines): Promise<void> {
  await Promise.all([
    readLines(
      child.stdout,
      { maxLineBytes: lines.maxLineBytes, onOverlong: (bytes) => lines.onOverlong(bytes) },
      (line) => lines.onLine(line),
      () => lines.onStdoutEnd?.(),
    ),
    readLines(child.stderr, { maxLineBytes: STDERR_MAX_LINE_BYTES }, (line) => lines.onStderr(line)),
  ])
}

/**
 * Hands over each line of `stream` as it completes (line-splitter.ts), the
 * last one, without a newline, when the stream ends; then `onEnd`. Resolves
 * after that, at the stream's end (or its close, for one that failed).
 */
export function readLines(stream: Readable, options: LineSplitterOptions, onLine: (line: string) => void, onEnd?: () => void): Promise<void> {
  const splitter = new LineSplitter(options)
  return new Promise((resolve) => {
    let ended = false
    const end = () => {
      if (ended) return
      ended = true
      for (const line of splitter.end()) onLine(line)
      onEnd?.()
      resolve()
    }
    stream.on('data', (chunk: Buffer) => {
      for (const line of splitter.push(chunk)) onLine(line)
    })
    stream.once('end', end)
    stream.once('close', end)
  })
}
