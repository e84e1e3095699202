import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { WebSocket } from 'ws'
import { toServiceError, type CommandOf, type ErrorBody, type RequestId, type ServiceEvent } from '../../../contract/mod.ts'
import { frameBytes, type FrameAdmission } from '../../limits/frame-admission.ts'
import type { Runners } from '../../runners.ts'
import type { SessionHub } from '../../session-hub.ts'
import { handOffTurn } from '../../turns/hand-off.ts'
import { isClientVisible, serverConnected, toQuickstart, type Dialect, type OpeningDialect } from './dialect.ts'
import { fromHotplexFrame, toHotplex } from './hotplex.ts'
import type { ClientFrame } from '../../../contract/frames.ts'
import { frameRequestId, parseFrame, steeringReply } from './frames.ts'
import { WriteBatch, type Corkable } from './write-batch.ts'

export interface ConnectionDeps {
  runners: Runners
  hub: SessionHub
  log: Logger
  /** Reads a frame or refuses it (size, rate; gateway/guard.ts): a refusal is an `error` event, the connection stays open. */
  admitFrame?: FrameAdmission
  /** Times each request frame (type, HTTP-like status, seconds) for service_request_duration_seconds. */
  observeRequest?: (type: string, status: number, seconds: number) => void
  /** Keep-alive pulses (gateway/keepalive/task-pulse.ts): sees every event delivered, may send `task_boundary` events. */
  pulses?: (send: (event: ServiceEvent) => void) => { observe(event: ServiceEvent): void; close(): void }
  /**
   * Bytes that may wait to be sent to this client (`limits.ws_send_buffer`): with more waiting when an
   * event is to be sent, the client is not reading and the connection is closed (1013); default 8 MiB.
   */
  maxSendBuffer?: number
  /**
   * May this client's tenant use the session (gateway/auth/owners.ts)? Throws SESSION_NOT_FOUND when it
   * belongs to another tenant; claims it when nobody has. Asked before anything is done for a session.
   */
  admit?: (sessionId: string) => Promise<void>
  /** The TCP socket under the WebSocket: the frames of one pass of the event loop go out in one write (write-batch.ts). */
  transport?: Corkable | undefined
  /** The shape the connection opens in (`?dialect=`, else `server.ws_dialect`); default native. */
  dialect?: OpeningDialect | undefined
}

/** `limits.ws_send_buffer`'s default. */
export const DEFAULT_SEND_BUFFER = 8 * 1024 * 1024

/** The close code for a client that does not read: 1013 "try again later", since its sessions go on and it may resume. */
export const SEND_BUFFER_CLOSE_CODE = 1013

/** The quick-start dialect's session, set by `session_start`. */
interface QuickstartSession {
  session_id: string
  work_dir?: string | undefined
  instructions?: string | undefined
  engine?: string | undefined
}

/** What a turn is started with, beside its session. */
type TurnInput = Pick<CommandOf<'execute'>, 'prompt' | 'instructions' | 'work_dir' | 'engine' | 'request_id'>

/**
 * One client on /ws/v1/agent. It receives the events of every session it has
 * named; a session outlives the connection, so a client that reconnects and
 * names the session again sees the rest of a running turn.
 */
export class Connection {
  readonly #socket: WebSocket
  readonly #deps: ConnectionDeps
  readonly #attached = new Map<string, () => void>()
  /** The last frame in handling, per session (see #inOrder). */
  readonly #ordered = new Map<string, Promise<void>>()
  #dialect: Dialect = 'native'
  #quickstart: QuickstartSession | undefined
  readonly #pulses: { observe(event: ServiceEvent): void; close(): void } | undefined
  readonly #batch: WriteBatch | undefined

  constructor(socket: WebSocket, deps: ConnectionDeps, initialSession?: string, lastSeq?: number) {
    this.#socket = socket
    this.#deps = deps
    this.#dialect = deps.dialect ?? 'native'
    this.#batch = deps.transport && new WriteBatch(deps.transport)
    this.#pulses = deps.pulses?.((event) => this.#sendEvent(event))
    socket.on('message', (data, isBinary) => {
      const refused = deps.admitFrame?.(frameBytes(data))
      // A frame refused for its rate is within the size limit: its request_id is read, so the client knows which request to send again.
      if (refused) return this.#sendError(refused, refused.code === 'RATE_LIMITED' && !isBinary ? requestIdOf(data.toString()) : undefined)
      void this.#onFrame(isBinary ? null : data.toString())
    })
    socket.on('close', () => {
      this.#detachAll()
      this.#pulses?.close()
    })
    // HotPlex never sent one, and its clients would take it for a turn's event.
    if (this.#dialect !== 'hotplex') socket.send(serverConnected(`evt_${randomUUID()}`))
    if (initialSession !== undefined) {
      // In the session's order, so a frame sent right after connecting waits for the check.
      void this.#inOrder(`session:${initialSession}`, async () => {
        await this.#admit(initialSession)
        this.#attach(initialSession, lastSeq)
      }).catch((err: unknown) => this.#sendError(toServiceError(err).toBody(), undefined, initialSession))
    }
  }

  async #admit(sessionId: string): Promise<void> {
    await this.#deps.admit?.(sessionId)
  }

  async #onFrame(text: string | null): Promise<void> {
    let raw: unknown
    try {
      if (text === null) throw new SyntaxError('binary frames are not accepted; send JSON text')
      raw = JSON.parse(text)
      if (this.#dialect === 'hotplex') raw = fromHotplexFrame(raw)
    } catch (err) {
      this.#sendError({ code: 'BAD_JSON', message: `frame is not valid JSON: ${(err as Error).message}` }, undefined)
      return
    }
    const requestId = frameRequestId(raw)
    const started = performance.now()
    let type = 'invalid'
    let status = 200
    try {
      const frame = parseFrame(raw)
      type = frame.type
      await this.#inOrder(orderKey(frame), () => this.#handle(frame))
    } catch (err) {
      const error = toServiceError(err)
      status = error.status
      if (error.code === 'INTERNAL') this.#deps.log.error({ err }, 'websocket request failed')
      this.#sendError(error.toBody(), requestId, (raw as { session_id?: unknown } | null)?.session_id)
    }
    this.#deps.observeRequest?.(type, status, (performance.now() - started) / 1000)
  }

  /**
   * Runs the frames of one session one after another, in the order the client sent them
   * (an execute, then a stop, must reach the runner in that order); other sessions do not wait.
   */
  #inOrder(key: string | undefined, handle: () => Promise<void>): Promise<void> {
    if (key === undefined) return handle()
    const handled = (this.#ordered.get(key) ?? Promise.resolve()).then(handle)
    const settled = handled.catch(() => {})
    this.#ordered.set(key, settled)
    void settled.then(() => {
      if (this.#ordered.get(key) === settled) this.#ordered.delete(key)
    })
    return handled
  }

  async #handle(frame: ClientFrame): Promise<void> {
    const { runners } = this.#deps
    switch (frame.type) {
      case 'execute': {
        const sessionId = frame.session_id ?? randomUUID()
        await this.#admit(sessionId)
        this.#attach(sessionId, frame.last_seq)
        await this.#execute(sessionId, frame)
        return
      }
      case 'session_start':
        this.#dialect = 'quickstart'
        {
          const sessionId = frame.session_id ?? randomUUID()
          await this.#admit(sessionId)
          this.#quickstart = { session_id: sessionId, work_dir: frame.work_dir, instructions: frame.instructions, engine: frame.engine }
        }
        this.#attach(this.#quickstart.session_id, frame.last_seq)
        return
      case 'attach':
        await this.#admit(frame.session_id)
        this.#attach(frame.session_id, frame.last_seq)
        return
      case 'prompt': {
        this.#dialect = 'quickstart'
        // A prompt with no session_start first gets a session of its own.
        this.#quickstart ??= { session_id: randomUUID() }
        const { session_id, ...started } = this.#quickstart
        await this.#admit(session_id)
        await this.#execute(session_id, { ...started, prompt: frame.content, request_id: frame.request_id })
        return
      }
      case 'stop':
        await this.#admit(frame.session_id)
        this.#attach(frame.session_id)
        await runners.send({ type: 'stop', session_id: frame.session_id, reason: frame.reason, request_id: frame.request_id })
        return
      case 'stats': {
        await this.#admit(frame.session_id)
        this.#attach(frame.session_id)
        const reply = await runners.send({ type: 'stats', session_id: frame.session_id })
        this.#sendEvent(withRequestId({ event: 'stats', session_id: frame.session_id, stats: reply.stats }, frame.request_id))
        return
      }
      case 'permission_reply':
      case 'answer':
      case 'reject':
        // Another tenant's session is SESSION_NOT_FOUND here, exactly as an unknown one.
        await this.#admit(frame.session_id)
        this.#attach(frame.session_id)
        await runners.send({ type: 'reply', session_id: frame.session_id, reply: steeringReply(frame), by: 'websocket' })
        return
      case 'version': {
        if (frame.session_id !== undefined) await this.#admit(frame.session_id)
        const reply = await runners.send({
          type: 'version',
          ...(frame.engine !== undefined && { engine: frame.engine }),
          ...(frame.session_id !== undefined && { session_id: frame.session_id }),
        })
        this.#sendEvent(withRequestId({ event: 'version', data: reply.version, engine: reply.engine }, frame.request_id))
        return
      }
    }
  }

  async #execute(sessionId: string, input: TurnInput): Promise<void> {
    this.#attach(sessionId)
    await handOffTurn(this.#deps, {
      type: 'execute',
      session_id: sessionId,
      turn_id: `turn_${randomUUID()}`,
      prompt: input.prompt,
      ...(input.instructions !== undefined && { instructions: input.instructions }),
      ...(input.work_dir !== undefined && { work_dir: input.work_dir }),
      ...(input.engine !== undefined && { engine: input.engine }),
      ...(input.request_id !== undefined && { request_id: input.request_id }),
    })
  }

  /** Follows the session (once per connection); with `lastSeq`, what came after it is replayed first. */
  #attach(sessionId: string, lastSeq?: number): void {
    if (this.#attached.has(sessionId)) return
    this.#attached.set(
      sessionId,
      this.#deps.hub.attach(
        sessionId,
        (event, json) => {
          if (!isClientVisible(event)) return
          this.#deliver(event, json)
          this.#pulses?.observe(event)
        },
        { afterSeq: lastSeq },
      ),
    )
  }

  #detachAll(): void {
    for (const detach of this.#attached.values()) detach()
    this.#attached.clear()
  }

  #deliver(event: ServiceEvent, json: string): void {
    const socket = this.#socket
    if (socket.readyState !== socket.OPEN) return
    // Checked before sending, so one event larger than the buffer still reaches a client that reads.
    const max = this.#deps.maxSendBuffer ?? DEFAULT_SEND_BUFFER
    if (socket.bufferedAmount > max) return this.#overflow(max)
    let text = json
    if (this.#dialect === 'quickstart') text = JSON.stringify(toQuickstart(event))
    else if (this.#dialect === 'hotplex') {
      const frame = toHotplex(event)
      if (frame === undefined) return
      text = JSON.stringify(frame)
    }
    this.#batch?.hold()
    socket.send(text)
  }

  /**
   * The client does not read what it is sent: rather than buffer the rest of its turns, the gateway stops
   * following its sessions and closes the connection. The close frame comes after what is already buffered,
   * so a client that reads again gets every event up to its last `seq`, then the close, and resumes with
   * `last_seq`; one that never reads is cut by `ws` 30 s later.
   */
  #overflow(max: number): void {
    this.#deps.log.warn(
      { buffered: this.#socket.bufferedAmount, limit: max, sessions: [...this.#attached.keys()].slice(0, 10) },
      'websocket client does not read: closing it',
    )
    this.#detachAll()
    this.#pulses?.close()
    this.#socket.close(SEND_BUFFER_CLOSE_CODE, `send buffer over limits.ws_send_buffer (${max} bytes); reconnect with last_seq`)
  }

  #sendEvent(event: ServiceEvent): void {
    this.#deliver(event, JSON.stringify(event))
  }

  #sendError(error: ErrorBody, requestId: RequestId | undefined, sessionId?: unknown): void {
    const event: ServiceEvent = { event: 'error', data: error.message, error }
    if (typeof sessionId === 'string') event.session_id = sessionId
    this.#sendEvent(withRequestId(event, requestId))
  }
}

function withRequestId<E extends ServiceEvent>(event: E, requestId: RequestId | undefined): E {
  if (requestId !== undefined) event.request_id = requestId
  return event
}

/** The request_id of a frame's text, if it is JSON with a usable one. */
function requestIdOf(text: string): RequestId | undefined {
  try {
    return frameRequestId(JSON.parse(text))
  } catch {
    return undefined
  }
}

/** Which frames must keep their order: those of one session; the quick-start dialect's frames all share one. */
function orderKey(frame: ClientFrame): string | undefined {
  if (frame.type === 'session_start' || frame.type === 'prompt') return 'quickstart'
  if (frame.type === 'version') return undefined
  return frame.session_id === undefined ? undefined : `session:${frame.session_id}`
}
