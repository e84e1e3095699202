import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('./guardian-main.ts', import.meta.url))

/** Registers session process tags with the guardian process (runner/process/guardian-main.ts). */
export interface ProcessGuard {
  watch(tag: string): void
  release(tag: string): void
}

/**
 * Starts the runner's guardian: its own process group, so a signal to the
 * runner's group does not take it too, and a pipe whose end is its cue.
 */
export class Guardian implements ProcessGuard {
  readonly #child: ChildProcess

  constructor(graceMs: number) {
    this.#child = spawn(process.execPath, [MAIN, String(graceMs)], { detached: true, stdio: ['pipe', 'ignore', 'inherit'] })
    this.#child.stdin!.on('error', () => {})
    this.#child.unref()
  }

  watch(tag: string): void {
    this.#child.stdin!.write(`+${tag}\n`)
  }

  release(tag: string): void {
    this.#child.stdin!.write(`-${tag}\n`)
  }

  /** A clean runner exit: every session was stopped already, so the guardian just goes. */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()))
    this.#child.stdin!.end()
    await exited
  }
}
