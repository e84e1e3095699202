import type { Logger } from 'pino'
import { ServiceError } from '../../contract/mod.ts'
import type { MarkerStore, SessionMarker } from '../cli-session.ts'
import { resolveSandbox, sandboxLabel } from '../sandbox.ts'

/**
 * The agent CLI's conversation of one session: the directory it works in,
 * whether the CLI has it stored (a new process resumes it), the system prompt
 * it started with, and the marker that tells the next owner all that.
 */
export class Conversation {
  readonly #sessionId: string
  readonly #cliSessionId: string
  readonly #markers: MarkerStore
  readonly #workBase: string
  readonly #log: Logger
  #workDir: string | undefined
  /** The CLI has a stored conversation for this session: start it with --resume. */
  #stored = false
  #markerSaved = false
  /** The appended system prompt the conversation has, once known. */
  #instructions: string | undefined

  constructor(sessionId: string, cliSessionId: string, markers: MarkerStore, workBase: string, log: Logger) {
    this.#sessionId = sessionId
    this.#cliSessionId = cliSessionId
    this.#markers = markers
    this.#workBase = workBase
    this.#log = log
  }

  /** Set once a prompt was admitted (useWorkDir). */
  get workDir(): string | undefined {
    return this.#workDir
  }

  /** Whether a new CLI process resumes the conversation. */
  get stored(): boolean {
    return this.#stored
  }

  /** The CLI lost the conversation its marker names (false), or has one no marker named (true). */
  set stored(stored: boolean) {
    this.#stored = stored
  }

  /**
   * The sandbox a prompt's `work_dir` names (none: the session's own, or the
   * one its marker recorded); it must stay the same within a session.
   */
  async useWorkDir(requested: string | undefined): Promise<void> {
    if (this.#workDir === undefined) {
      const marker = await this.#markers.read(this.#sessionId)
      if (marker) {
        this.#stored = true
        this.#markerSaved = true
        this.#workDir = marker.work_dir
        this.#instructions = marker.instructions
      }
    }
    if (requested === undefined && this.#workDir !== undefined) return
    const resolved = await resolveSandbox(this.#workBase, this.#sessionId, requested)
    if (this.#workDir !== undefined && resolved !== this.#workDir) {
      throw new ServiceError('WORK_DIR_MISMATCH', `session ${this.#sessionId} works in "${await sandboxLabel(this.#workBase, this.#workDir)}"; work_dir must stay the same within a session`)
    }
    this.#workDir = resolved
  }

  /**
   * A CLI process starts for a turn with these instructions: a resumed
   * conversation keeps the system prompt it started with, a new one takes the
   * turn's. Returns the conversation's system prompt.
   */
  begin(turnInstructions: string | undefined): string | undefined {
    if (!this.#stored) this.#instructions = turnInstructions
    return this.#instructions
  }

  /** A turn ended in the CLI: the conversation is stored, and its marker written once. */
  saved(): void {
    this.#stored = true
    if (this.#markerSaved) return
    this.#markerSaved = true
    const marker: SessionMarker = { session_id: this.#sessionId, cli_session_id: this.#cliSessionId, work_dir: this.#workDir!, created_at: new Date().toISOString() }
    if (this.#instructions !== undefined) marker.instructions = this.#instructions
    this.#markers.write(marker).catch((err: unknown) => {
      this.#markerSaved = false
      // Recoverable (spec §6.3 warn): the next turn writes it again.
      this.#log.warn({ session_id: this.#sessionId, err }, 'cannot write session marker')
    })
  }
}
