import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('./guardian-main.ts', import.meta.url))

/** Registers session process tags with the guardian process (runner/process/guardian-main.ts). */
export interface ProcessGuard {
  watch(tag: string): void
  release(tag: string): void
}

/**
 * The runner's guardian process: its own process group, so a signal to the
 * runner's group does not take it too, and a pipe whose end is its cue.
 * Started with the runner; tags registered before that are not watched.
 */
export class Guardian implements ProcessGuard {
  readonly #graceMs: number
  #child: ChildProcess | undefined

  constructor(graceMs: number) {
    this.#graceMs = graceMs
  }

  start(): void {
    if (this.#child) return
    this.#child = spawn(process.execPath, [MAIN, String(this.#graceMs)], { detached: true, stdio: ['pipe', 'ignore', 'inherit'] })
    this.#child.stdin!.on('error', () => {})
    this.#child.unref()
  }

  watch(tag: string): void {
    this.#child?.stdin?.write(`+${tag}\n`)
  }

  release(tag: string): void {
    this.#child?.stdin?.write(`-${tag}\n`)
  }

  /** A clean runner exit: every session was stopped already, so the guardian just goes. */
  async close(): Promise<void> {
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.stdin!.end()
    await exited
  }
}
