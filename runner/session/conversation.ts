import type { Logger } from 'pino'
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { isInside, ServiceError, workDirRoot } from '../../contract/mod.ts'
import type { MarkerStore, SessionMarker } from '../cli-session.ts'
import type { EngineSet } from '../engine/engine-set.ts'
import { resolveSandbox, sandboxLabel } from '../sandbox.ts'

export interface ConversationOptions {
  sessionId: string
  cliSessionId: string
  markers: MarkerStore
  workBase: string
  /** `session.work_dir_roots`: absolute directories a client's absolute work_dir may lie in, used as it is. */
  workDirRoots?: readonly string[] | undefined
  /** The engine the registry says the session runs, if any. */
  recordedEngine?: string | undefined
  log: Logger
}

/**
 * The agent CLI's conversation of one session: the engine it is in, the
 * directory it works in, whether the CLI has it stored (a new process resumes
 * it) and under which id, the system prompt it started with, and the marker
 * that tells the next owner all that.
 */
export class Conversation {
  readonly #sessionId: string
  readonly #cliSessionId: string
  readonly #markers: MarkerStore
  readonly #workBase: string
  readonly #roots: readonly string[]
  readonly #log: Logger
  /** Fixed by the marker, the registry record or the first admitted prompt. */
  #engine: string | undefined
  /** The CLI's own id of the conversation, once it named one. */
  #conversationId: string | undefined
  #workDir: string | undefined
  /** The CLI has a stored conversation for this session: start it with --resume. */
  #stored = false
  #markerSaved = false
  /** The appended system prompt the conversation has, once known. */
  #instructions: string | undefined

  constructor(options: ConversationOptions) {
    this.#sessionId = options.sessionId
    this.#cliSessionId = options.cliSessionId
    this.#markers = options.markers
    this.#workBase = options.workBase
    this.#roots = options.workDirRoots ?? []
    this.#engine = options.recordedEngine
    this.#log = options.log
  }

  /** The engine's name once a prompt was admitted (useEngine); undefined means the default, for a session from before engines had names. */
  get engine(): string | undefined {
    return this.#engine
  }

  /** The CLI's own id to resume the conversation under, when it named one that differs from the service's. */
  get conversationId(): string | undefined {
    return this.#conversationId
  }

  /**
   * Fixes the session's engine with its first prompt (the one named, else the
   * default); a later prompt may only name the same one. Unknown names are
   * BAD_REQUEST (after useWorkDir, which reads what the marker recorded).
   */
  useEngine(requested: string | undefined, engines: EngineSet): void {
    const fixed = this.#engine
    if (fixed === undefined) {
      this.#engine = engines.get(requested).name
      return
    }
    if (requested !== undefined && requested !== fixed) {
      throw new ServiceError(
        'BAD_REQUEST',
        `session ${this.#sessionId} runs engine "${fixed}"; a session keeps the engine of its first turn (start a new session for "${requested}")`,
      )
    }
    if (!engines.names.includes(fixed)) {
      throw new ServiceError(
        'BAD_REQUEST',
        `session ${this.#sessionId} runs engine "${fixed}", which is no longer configured (configured engines: ${engines.names.join(', ')})`,
      )
    }
  }

  /** The CLI reported its own id for the conversation: resumed later under that id; the marker records it. */
  named(conversationId: string): void {
    if (conversationId === this.#cliSessionId || conversationId === this.#conversationId) return
    this.#conversationId = conversationId
    // Written again if it was written without it (the id comes with the CLI's first output, the marker after its first turn).
    this.#markerSaved = false
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
        if (marker.engine !== undefined) this.#engine = marker.engine
        if (marker.conversation_id !== undefined) this.#conversationId = marker.conversation_id
      }
    }
    if (requested === undefined && this.#workDir !== undefined) return
    const resolved = await this.#resolve(requested)
    if (this.#workDir !== undefined && resolved !== this.#workDir) {
      const base = await this.sandboxBase()
      const label = base === this.#workBase ? await sandboxLabel(base, this.#workDir) : this.#workDir
      throw new ServiceError('WORK_DIR_MISMATCH', `session ${this.#sessionId} works in "${label}"; work_dir must stay the same within a session`)
    }
    this.#workDir = resolved
  }

  /**
   * An absolute work_dir inside an allowed root is resolved against that root (the same
   * symlink checks, the root in place of the base); anything else against the base, whose
   * refusal of an absolute path then names the roots.
   */
  async #resolve(requested: string | undefined): Promise<string> {
    const root = requested === undefined ? undefined : workDirRoot(requested, this.#roots)
    if (root === undefined || requested === undefined) {
      try {
        return await resolveSandbox(this.#workBase, this.#sessionId, requested)
      } catch (err) {
        if (
          requested !== undefined &&
          path.isAbsolute(requested) &&
          err instanceof ServiceError &&
          err.code === 'WORK_DIR_REJECTED' &&
          this.#roots.length > 0
        ) {
          throw new ServiceError('WORK_DIR_REJECTED', `${err.message}; absolute work_dirs are allowed in ${this.#roots.join(', ')}`)
        }
        throw err
      }
    }
    const relative = path.relative(path.resolve(root), path.resolve(requested))
    return resolveSandbox(root, this.#sessionId, relative === '' ? '.' : relative)
  }

  /** The directory the session's work dir was judged against (and is checked again against before a CLI starts): its root, else the base. */
  async sandboxBase(): Promise<string> {
    const dir = this.#workDir
    if (dir === undefined || this.#roots.length === 0) return this.#workBase
    // A root may hold the base: a work dir in the base keeps the base's stricter check.
    if (isInside(await realpath(this.#workBase).catch(() => path.resolve(this.#workBase)), dir)) return this.#workBase
    for (const root of this.#roots) {
      const real = await realpath(root).catch(() => path.resolve(root))
      if (isInside(real, dir)) return real
    }
    return this.#workBase
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
    const marker: SessionMarker = {
      session_id: this.#sessionId,
      cli_session_id: this.#cliSessionId,
      work_dir: this.#workDir!,
      created_at: new Date().toISOString(),
    }
    if (this.#instructions !== undefined) marker.instructions = this.#instructions
    if (this.#engine !== undefined) marker.engine = this.#engine
    if (this.#conversationId !== undefined) marker.conversation_id = this.#conversationId
    this.#markers.write(marker).catch((err: unknown) => {
      this.#markerSaved = false
      // Recoverable (spec §6.3 warn): the next turn writes it again.
      this.#log.warn({ session_id: this.#sessionId, err }, 'cannot write session marker')
    })
  }
}
