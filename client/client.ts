import { ServiceError } from '../contract/errors.ts'
import type { ClientFrame } from '../contract/frames.ts'
import { isTurnEnd, ServiceEventSchema, steeringIdOf, type ServiceEvent } from '../contract/events.ts'
import type { Stats } from '../contract/stats.ts'
import type { SteeringReply } from '../contract/steering.ts'
import { DEFAULT_RETRY, FATAL_CODES, RETRYABLE_CODES, retryDelayMs, type RetryPolicy } from './backoff.ts'
import { EventQueue } from './event-queue.ts'
import { randomId } from './ids.ts'
import { SequenceTracker } from './sequence.ts'
import { Session, type ExecuteOptions, type SessionPort } from './session.ts'
import type { SteeringResolution } from './steering.ts'
import { SteeringWatch, type PermissionHandler, type QuestionHandler } from './steering-watch.ts'
import { HandshakeError, webSocketUrl, type OpenSocket, type Socket } from './transport.ts'

export interface ConnectOptions {
  /** The service's address (`http://127.0.0.1:8080`) or its WebSocket URL. */
  url: string
  /** An API key of the service (none when it runs without keys). */
  apiKey?: string | undefined
  /** Backoff of reconnections and of refused requests; default 250 ms doubling to 30 s, 10 tries. */
  retry?: Partial<RetryPolicy> | undefined
  /** Told when the connection drops, is tried again, is back, or is given up. */
  onStatus?: ((status: ConnectionStatus) => void) | undefined
}

export type ConnectionStatus =
  | { state: 'open' }
  | { state: 'dropped'; code: number; reason: string }
  | { state: 'reconnecting'; attempt: number; delayMs: number; error?: Error | undefined }
  | { state: 'closed'; error?: Error | undefined }

/** A request waiting for its answer: a turn's events, or one reply (`stats`, `version`). */
type Pending =
  | { kind: 'turn'; frame: Frame; sessionId: string; queue: EventQueue<ServiceEvent>; attempts: number; sent: boolean; started: boolean }
  | {
      kind: 'reply'
      frame: Frame
      answer: 'stats' | 'version' | 'stopped'
      resolve: (event: ServiceEvent) => void
      reject: (err: Error) => void
      attempts: number
      sent: boolean
    }
  | {
      kind: 'steer'
      frame: Frame
      sessionId: string
      id: string
      resolve: (event: SteeringResolution) => void
      reject: (err: Error) => void
      attempts: number
      sent: boolean
    }

/** The frames this client sends (contract/frames.ts), each with its own request id. */
type Frame = Extract<ClientFrame, { type: 'execute' | 'stop' | 'stats' | 'version' | 'attach' | 'permission_reply' | 'answer' | 'reject' }> & {
  request_id: string
}

/**
 * A client of the native WebSocket protocol. One connection carries every
 * session; when it drops, the client reconnects with backoff, attaches each
 * session it follows with the last sequence it delivered, and drops what
 * the replay repeats, so every consumer sees each event once, in order.
 */
export class AgentClient implements SessionPort {
  readonly #url: string
  readonly #apiKey: string | undefined
  readonly #open: OpenSocket
  readonly #retry: RetryPolicy
  readonly #onStatus: ((status: ConnectionStatus) => void) | undefined
  /** Request ids unique to this client, so the events of its turns are told apart from other clients' on a shared session. */
  readonly #prefix = `c${randomId(6)}`
  #nextRequest = 0
  #socket: Socket | undefined
  #closed = false
  readonly #pending = new Map<string, Pending>()
  readonly #followers = new Map<string, Set<EventQueue<ServiceEvent>>>()
  /** The request of each turn this client started, from its first event on (a stop's `stopped` names the turn, not the execute). */
  readonly #turns = new Map<string, string>()
  readonly #sequences = new SequenceTracker()
  /** Per session: its requests for a person and the handlers that answer them. */
  readonly #steering = new Map<string, SteeringWatch>()
  #reconnecting: Promise<void> | undefined

  constructor(options: ConnectOptions, openSocket: OpenSocket) {
    this.#url = webSocketUrl(options.url)
    this.#apiKey = options.apiKey
    this.#open = openSocket
    this.#retry = { ...DEFAULT_RETRY, ...options.retry }
    this.#onStatus = options.onStatus
  }

  /** Opens the first connection; a refusal with a retryable code is tried again with backoff, anything else is thrown. */
  async start(): Promise<this> {
    await this.#connect(false)
    return this
  }

  /** A session by id; without one, a new session with a random id. */
  session(id: string = randomId(16)): Session {
    return new Session(id, this)
  }

  /** The agent CLI's version (`data`) and engine. */
  async version(): Promise<{ version: string; engine: string }> {
    const event = await this.#request({ type: 'version', request_id: this.#requestId() }, 'version')
    if (event.event !== 'version') throw new Error(`expected a version event, got ${event.event}`)
    return { version: event.data, engine: event.engine }
  }

  /** Closes the connection; open iterators end, waiting requests fail. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#socket?.close()
    this.#socket = undefined
    this.#finishAll(undefined)
  }

  execute(sessionId: string, prompt: string, options: ExecuteOptions): AsyncIterableIterator<ServiceEvent> {
    const frame: Frame = { type: 'execute', request_id: this.#requestId(), session_id: sessionId, prompt }
    if (options.workDir !== undefined) frame.work_dir = options.workDir
    if (options.instructions !== undefined) frame.instructions = options.instructions
    if (options.engine !== undefined) frame.engine = options.engine
    const queue = new EventQueue<ServiceEvent>(() => this.#pending.delete(frame.request_id))
    if (this.#closed) queue.fail(new Error('the client is closed'))
    else {
      this.#pending.set(frame.request_id, { kind: 'turn', frame, sessionId, queue, attempts: 0, sent: false, started: false })
      this.#sendPending(frame.request_id)
    }
    return queue
  }

  follow(sessionId: string, afterSeq: number): AsyncIterableIterator<ServiceEvent> {
    const followers = this.#followers.get(sessionId) ?? new Set()
    const queue = new EventQueue<ServiceEvent>(() => followers.delete(queue))
    if (this.#closed) {
      queue.end()
      return queue
    }
    followers.add(queue)
    this.#followers.set(sessionId, followers)
    this.#sequences.skipTo(sessionId, afterSeq)
    this.#sendNow({ type: 'attach', request_id: this.#requestId(), session_id: sessionId, last_seq: this.#sequences.last(sessionId) })
    return queue
  }

  async stop(sessionId: string, reason: string | undefined): Promise<void> {
    const frame: Frame = { type: 'stop', request_id: this.#requestId(), session_id: sessionId }
    if (reason !== undefined) frame.reason = reason
    await this.#request(frame, 'stopped')
  }

  async stats(sessionId: string): Promise<Stats> {
    const event = await this.#request({ type: 'stats', request_id: this.#requestId(), session_id: sessionId }, 'stats')
    if (event.event !== 'stats') throw new Error(`expected a stats event, got ${event.event}`)
    return event.stats
  }

  onPermission(sessionId: string, handler: PermissionHandler): () => void {
    return this.#watch(sessionId).onPermission(handler)
  }

  onQuestion(sessionId: string, handler: QuestionHandler): () => void {
    return this.#watch(sessionId).onQuestion(handler)
  }

  reply(sessionId: string, reply: SteeringReply): Promise<SteeringResolution> {
    if (this.#closed) return Promise.reject(new Error('the client is closed'))
    const request_id = this.#requestId()
    const frame: Frame =
      reply.kind === 'permission'
        ? {
            type: 'permission_reply',
            request_id,
            session_id: sessionId,
            permission_id: reply.id,
            decision: reply.decision,
            ...(reply.message !== undefined && { message: reply.message }),
          }
        : reply.kind === 'answer'
          ? { type: 'answer', request_id, session_id: sessionId, question_id: reply.id, answers: reply.answers }
          : { type: 'reject', request_id, session_id: sessionId, question_id: reply.id, ...(reply.message !== undefined && { message: reply.message }) }
    return new Promise((resolve, reject) => {
      this.#pending.set(request_id, { kind: 'steer', frame, sessionId, id: reply.id, resolve, reject, attempts: 0, sent: false })
      this.#sendPending(request_id)
    })
  }

  #watch(sessionId: string): SteeringWatch {
    let watch = this.#steering.get(sessionId)
    if (watch === undefined) {
      watch = new SteeringWatch()
      this.#steering.set(sessionId, watch)
    }
    return watch
  }

  #requestId(): string {
    return `${this.#prefix}-${++this.#nextRequest}`
  }

  #request(frame: Frame, answer: 'stats' | 'version' | 'stopped'): Promise<ServiceEvent> {
    if (this.#closed) return Promise.reject(new Error('the client is closed'))
    return new Promise((resolve, reject) => {
      this.#pending.set(frame.request_id, { kind: 'reply', frame, answer, resolve, reject, attempts: 0, sent: false })
      this.#sendPending(frame.request_id)
    })
  }

  /** Sends a frame if connected; false when it has to wait for the connection. */
  #sendNow(frame: Frame): boolean {
    if (this.#socket === undefined) return false
    this.#socket.send(JSON.stringify(frame))
    return true
  }

  #sendPending(requestId: string): void {
    const pending = this.#pending.get(requestId)
    if (pending !== undefined && this.#sendNow(pending.frame)) pending.sent = true
  }

  async #connect(reconnecting: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.#socket = await this.#open(this.#url, this.#apiKey, {
          message: (text) => this.#onMessage(text),
          closed: (code, reason) => this.#onClosed(code, reason),
        })
        if (this.#closed) return this.#socket.close()
        this.#onStatus?.({ state: 'open' })
        this.#resume()
        return
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err))
        const code = error instanceof HandshakeError ? error.code : undefined
        // The first connection retries only an explicit "not now": an address that refuses connections is a mistake to report.
        const retryable = reconnecting ? code === undefined || RETRYABLE_CODES.has(code) : code !== undefined && RETRYABLE_CODES.has(code)
        if (this.#closed) return
        if (!retryable || (code !== undefined && FATAL_CODES.has(code)) || attempt >= this.#retry.maxAttempts) throw error
        const delayMs = retryDelayMs(attempt, this.#retry, error instanceof HandshakeError ? error.retryAfterMs : undefined)
        this.#onStatus?.({ state: 'reconnecting', attempt, delayMs, error })
        await new Promise((resolve) => setTimeout(resolve, delayMs))
        if (this.#closed) return
      }
    }
  }

  /** After a (re)connection: attach every followed session after its last delivered sequence, then send what waited. */
  #resume(): void {
    const sessions = new Set(this.#followers.keys())
    for (const pending of this.#pending.values()) if ((pending.kind === 'turn' || pending.kind === 'steer') && pending.sent) sessions.add(pending.sessionId)
    for (const sessionId of sessions) {
      this.#sendNow({ type: 'attach', request_id: this.#requestId(), session_id: sessionId, last_seq: this.#sequences.last(sessionId) })
    }
    for (const [requestId, pending] of this.#pending) {
      // An execute, a stop or an answer already sent is not sent again (the replay brings its events); stats and version are asked again.
      if (!pending.sent || (pending.kind === 'reply' && pending.answer !== 'stopped')) this.#sendPending(requestId)
    }
  }

  #onClosed(code: number, reason: string): void {
    this.#socket = undefined
    if (this.#closed || this.#reconnecting) return
    this.#onStatus?.({ state: 'dropped', code, reason })
    this.#reconnecting = this.#connect(true)
      .catch((err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err))
        this.#closed = true
        this.#onStatus?.({ state: 'closed', error })
        this.#finishAll(error)
      })
      .finally(() => (this.#reconnecting = undefined))
  }

  #onMessage(text: string): void {
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch {
      return
    }
    // Frames that are not events (`server.connected`) and events this client does not know (a newer service) are passed over.
    const parsed = ServiceEventSchema.safeParse(raw)
    if (!parsed.success) return
    const event = parsed.data as ServiceEvent
    if (!this.#sequences.accept(event.session_id, event.seq)) return
    if (event.session_id !== undefined) this.#observeSteering(event.session_id, event)
    const requestId = typeof event.request_id === 'string' ? event.request_id : undefined
    const pending = requestId === undefined ? undefined : this.#pending.get(requestId)
    if (pending?.kind === 'steer' && event.event === 'error') {
      if (this.#retried(pending, event)) return
      this.#pending.delete(pending.frame.request_id)
      pending.reject(new ServiceError(event.error.code, event.error.message))
      return
    }
    if (pending?.kind === 'reply') {
      this.#onReply(pending, event)
      // A stop's `stopped` also ends its turn, which its followers see.
      if (event.event !== 'stopped') return
    }
    if (pending?.kind === 'turn' && this.#retried(pending, event)) return
    if (event.session_id !== undefined) for (const follower of this.#followers.get(event.session_id) ?? []) follower.push(event)
    const turnRequest = pending?.kind === 'turn' ? requestId : event.turn_id === undefined ? undefined : this.#turns.get(event.turn_id)
    const turn = turnRequest === undefined ? undefined : this.#pending.get(turnRequest)
    if (turn?.kind !== 'turn') {
      if (event.turn_id !== undefined && isTurnEnd(event)) this.#turns.delete(event.turn_id)
      return
    }
    turn.started = true
    if (event.turn_id !== undefined) this.#turns.set(event.turn_id, turn.frame.request_id)
    turn.queue.push(event)
    if (isTurnEnd(event)) {
      this.#pending.delete(turn.frame.request_id)
      if (event.turn_id !== undefined) this.#turns.delete(event.turn_id)
      turn.queue.end()
    }
  }

  /** Requests for a person go to the session's handlers; a resolution settles this client's answers to it. */
  #observeSteering(sessionId: string, event: ServiceEvent): void {
    if (event.event !== 'permission_request' && event.event !== 'question' && event.event !== 'permission_resolved' && event.event !== 'question_resolved')
      return
    this.#watch(sessionId).observe(event)
    if (event.event !== 'permission_resolved' && event.event !== 'question_resolved') return
    for (const [requestId, pending] of this.#pending) {
      if (pending.kind !== 'steer' || pending.sessionId !== sessionId || pending.id !== steeringIdOf(event)) continue
      this.#pending.delete(requestId)
      pending.resolve(event)
    }
  }

  #onReply(pending: Extract<Pending, { kind: 'reply' }>, event: ServiceEvent): void {
    if (this.#retried(pending, event)) return
    this.#pending.delete(pending.frame.request_id)
    if (event.event === 'error') pending.reject(new ServiceError(event.error.code, event.error.message))
    else if (event.event === pending.answer) pending.resolve(event)
    else pending.reject(new Error(`expected a ${pending.answer} event, got ${event.event}`))
  }

  /** A refusal that says "not now", before anything of the request ran: sent again after the backoff, while tries remain. */
  #retried(pending: Pending, event: ServiceEvent): boolean {
    if (event.event !== 'error' || !RETRYABLE_CODES.has(event.error.code)) return false
    if ((pending.kind === 'turn' && pending.started) || ++pending.attempts >= this.#retry.maxAttempts) return false
    pending.sent = false
    const delayMs = retryDelayMs(pending.attempts, this.#retry)
    setTimeout(() => this.#sendPending(pending.frame.request_id), delayMs)
    return true
  }

  #finishAll(error: Error | undefined): void {
    for (const pending of this.#pending.values()) {
      if (pending.kind !== 'turn') pending.reject(error ?? new Error('the client is closed'))
      else if (error === undefined) pending.queue.end()
      else pending.queue.fail(error)
    }
    this.#pending.clear()
    this.#turns.clear()
    for (const followers of this.#followers.values()) for (const follower of followers) error === undefined ? follower.end() : follower.fail(error)
    this.#followers.clear()
    for (const watch of this.#steering.values()) watch.close(error ?? new Error('the client is closed'))
    this.#steering.clear()
  }
}
