import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { sessionKey, type ChatMessage } from './wire.ts'

/**
 * The adapter session table (spec §2.9, §3): one agent session per
 * `{conversationId}:{senderId}`, created by its first message, kept alive by
 * later ones, removed by the sweep after `idleMs` without activity, which
 * also frees its agent process. The messages of one key are worked on one at
 * a time in arrival order; different keys run in parallel.
 */

/** An adapter session record. */
export interface ChatSession {
  key: string
  /** The agent session id (a fresh one per adapter session, so a removed session's conversation is not resumed). */
  session_id: string
  user_id: string
  platform: 'chat'
  conversation_id: string
  /** robotCode of the latest message that had one. */
  robot_code: string | undefined
  created_at: number
  /** Epoch ms of the latest message or of the end of the latest work. */
  last_active: number
}

/** Runs `task` every `ms` until the returned function is called. */
export type Every = (ms: number, task: () => Promise<void>) => () => void

export interface ChatSessionsOptions {
  idleMs: number
  /** Frees a removed session's agent process (the runner `close` command). */
  close: (sessionId: string) => Promise<void>
  log: Logger
  now?: () => number
  newSessionId?: () => string
}

interface Entry {
  session: ChatSession
  /** Work queued or running for the key. */
  pending: number
  /** The end of the key's last queued work. */
  tail: Promise<void>
}

export const defaultEvery: Every = (ms, task) => {
  const timer = setInterval(() => void task(), ms)
  timer.unref()
  return () => clearInterval(timer)
}

export class ChatSessions {
  readonly #options: ChatSessionsOptions
  readonly #now: () => number
  readonly #newSessionId: () => string
  readonly #entries = new Map<string, Entry>()
  #sweeping: Promise<string[]> | undefined

  constructor(options: ChatSessionsOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#newSessionId = options.newSessionId ?? (() => `chat-${randomUUID()}`)
  }

  /**
   * Records the message on its key's session (creating it when there is
   * none) and queues `work` behind the key's earlier work. Returns at once.
   */
  enqueue(message: ChatMessage, work: (session: ChatSession) => Promise<void>): ChatSession {
    const entry = this.#touch(message)
    const { session } = entry
    entry.pending++
    entry.tail = entry.tail
      .then(() => work(session))
      .catch((err: unknown) => this.#options.log.error({ err, session_id: session.session_id, key: session.key }, 'chat work failed'))
      .finally(() => {
        entry.pending--
        session.last_active = this.#now()
      })
    return session
  }

  /** Records the message on its key's session (creating it when there is none) without queueing work. */
  touch(message: ChatMessage): ChatSession {
    return this.#touch(message).session
  }

  get(key: string): ChatSession | undefined {
    return this.#entries.get(key)?.session
  }

  get size(): number {
    return this.#entries.size
  }

  /** Resolves when every key's queued work has ended (for shutdown and tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((entry) => entry.tail))
  }

  /**
   * Removes sessions idle longer than `idleMs` (none with work queued or
   * running) and frees their agent processes; resolves with the removed
   * sessions' ids. Overlapping calls share one sweep.
   */
  sweep(): Promise<string[]> {
    this.#sweeping ??= this.#sweep().finally(() => {
      this.#sweeping = undefined
    })
    return this.#sweeping
  }

  /** Starts sweeping every `intervalMs`; returns the function that stops it. */
  startSweeping(intervalMs: number, every: Every = defaultEvery): () => void {
    return every(intervalMs, async () => {
      await this.sweep()
    })
  }

  #touch(message: ChatMessage): Entry {
    const key = sessionKey(message)
    const now = this.#now()
    let entry = this.#entries.get(key)
    if (!entry) {
      const session: ChatSession = {
        key,
        session_id: this.#newSessionId(),
        user_id: message.user_id,
        platform: 'chat',
        conversation_id: message.metadata.conversation_id,
        robot_code: message.metadata.robot_code,
        created_at: now,
        last_active: now,
      }
      entry = { session, pending: 0, tail: Promise.resolve() }
      this.#entries.set(key, entry)
      this.#options.log.info({ session_id: session.session_id, key }, 'chat session created')
    } else {
      entry.session.last_active = now
      entry.session.robot_code = message.metadata.robot_code ?? entry.session.robot_code
    }
    return entry
  }

  async #sweep(): Promise<string[]> {
    const cutoff = this.#now() - this.#options.idleMs
    const removed: ChatSession[] = []
    for (const [key, entry] of this.#entries) {
      if (entry.pending > 0 || entry.session.last_active >= cutoff) continue
      // Out of the table before the await: a message arriving now starts a new session.
      this.#entries.delete(key)
      removed.push(entry.session)
    }
    await Promise.all(
      removed.map(async (session) => {
        try {
          await this.#options.close(session.session_id)
          this.#options.log.info({ session_id: session.session_id, key: session.key }, 'chat session removed after inactivity')
        } catch (err) {
          // The runner's own idle reaper (engine.idle_timeout) frees the process later.
          this.#options.log.warn({ err, session_id: session.session_id, key: session.key }, 'chat session removed; freeing its agent process failed')
        }
      }),
    )
    return removed.map((session) => session.session_id)
  }
}
