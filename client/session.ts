import type { ServiceEvent } from '../contract/events.ts'
import type { Stats } from '../contract/stats.ts'
import type { Answers, PermissionDecision, SteeringReply } from '../contract/steering.ts'
import type { PermissionResolved, QuestionResolved, SteeringResolution } from './steering.ts'
import type { PermissionHandler, QuestionHandler } from './steering-watch.ts'

/** What `execute` may add to the prompt (the WebSocket `execute` frame's optional fields). */
export interface ExecuteOptions {
  /** The session's directory below the sandbox base (first execute only; a different one later is WORK_DIR_MISMATCH). */
  workDir?: string
  /** Added to the agent's system prompt for this session. */
  instructions?: string
  /** The engine (agent CLI) the session runs, a configured name; first execute only, none: the service's default. */
  engine?: string
}

/** What a Session asks of its client (client.ts implements it). */
export interface SessionPort {
  execute(sessionId: string, prompt: string, options: ExecuteOptions): AsyncIterableIterator<ServiceEvent>
  follow(sessionId: string, afterSeq: number): AsyncIterableIterator<ServiceEvent>
  stop(sessionId: string, reason: string | undefined): Promise<void>
  stats(sessionId: string): Promise<Stats>
  onPermission(sessionId: string, handler: PermissionHandler): () => void
  onQuestion(sessionId: string, handler: QuestionHandler): () => void
  reply(sessionId: string, reply: SteeringReply): Promise<SteeringResolution>
}

/** One session of the service, by id; it exists on the service from its first execute on. */
export class Session {
  readonly id: string
  readonly #port: SessionPort

  constructor(id: string, port: SessionPort) {
    this.id = id
    this.#port = port
  }

  /**
   * Runs a prompt: the turn's events, in order, each once even across
   * reconnections, ending with `completed`, `stopped` or an `error` that
   * ends the turn (isTurnEnd). A refusal with OVERLOADED, RATE_LIMITED or
   * SHUTTING_DOWN is retried with backoff first; when the tries run out the
   * refusal is the turn's last event.
   */
  execute(prompt: string, options: ExecuteOptions = {}): AsyncIterableIterator<ServiceEvent> {
    return this.#port.execute(this.id, prompt, options)
  }

  /**
   * Every event of the session after `afterSeq` (default 0: from its first),
   * then live ones, until the iterator is left or the client closes. Follow
   * before executing on this client: the service replays a session once per connection.
   */
  follow(options: { afterSeq?: number } = {}): AsyncIterableIterator<ServiceEvent> {
    return this.#port.follow(this.id, options.afterSeq ?? 0)
  }

  /** Stops the running turn (its events end with `stopped`); resolves once the request is sent. */
  stop(reason?: string): Promise<void> {
    return this.#port.stop(this.id, reason)
  }

  /** The session's counters summed over its turns. */
  stats(): Promise<Stats> {
    return this.#port.stats(this.id)
  }

  /**
   * Calls `handler` for each tool call of this session that waits for a
   * person's yes, once per request, as this client receives the session's
   * events (a turn it runs or a session it follows). A request replayed on
   * attach is handed over only if its resolution did not come with it; its
   * `context.signal` aborts when anyone settles it. Returns the unsubscribe.
   */
  onPermission(handler: PermissionHandler): () => void {
    return this.#port.onPermission(this.id, handler)
  }

  /** Like onPermission, for the agent's questions. */
  onQuestion(handler: QuestionHandler): () => void {
    return this.#port.onQuestion(this.id, handler)
  }

  /**
   * Answers a permission request; resolves with its `permission_resolved`
   * (whoever's answer counted: a faster client's decision may differ),
   * rejects with a ServiceError (PERMISSION_NOT_FOUND, ALREADY_ANSWERED, …).
   */
  permissionReply(permissionId: string, decision: PermissionDecision, message?: string): Promise<PermissionResolved> {
    return this.#port.reply(this.id, {
      kind: 'permission',
      id: permissionId,
      decision,
      ...(message !== undefined && { message }),
    }) as Promise<PermissionResolved>
  }

  /** Answers a question: one list of chosen labels (or free text) per question; resolves with its `question_resolved`. */
  answer(questionId: string, answers: Answers): Promise<QuestionResolved> {
    return this.#port.reply(this.id, { kind: 'answer', id: questionId, answers }) as Promise<QuestionResolved>
  }

  /** Declines a question; the agent reads `message`. Resolves with its `question_resolved`. */
  reject(questionId: string, message?: string): Promise<QuestionResolved> {
    return this.#port.reply(this.id, { kind: 'reject', id: questionId, ...(message !== undefined && { message }) }) as Promise<QuestionResolved>
  }
}
