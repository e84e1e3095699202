import type { Logger } from 'pino'
import { ServiceError, toServiceError } from '../../contract/mod.ts'
import { runTurn, type TurnDeps, type TurnOutcome } from '../turns/follow.ts'
import { chunkMessage } from './chunker.ts'
import type { ChatSettings } from './config.ts'
import { ChatError } from './errors.ts'
import type { ChatSession, ChatSessions } from './sessions.ts'
import { ChatSteering } from './steering/chat-steering.ts'
import { sendBody, sessionKey, type ChatMessage, type SendBody } from './wire.ts'

/** What the adapter needs of the robot API (RobotClient, or a stub in tests). */
export interface RobotSender {
  send(robotCode: string, body: SendBody): Promise<void>
}

export interface ChatAdapterDeps {
  settings: ChatSettings
  turns: TurnDeps
  sessions: ChatSessions
  robot: RobotSender
  log: Logger
}

/** Counters of the adapter's work, for logs and tests. */
export interface ChatCounters {
  messages: number
  ignored: number
  turns: number
  parts_sent: number
  parts_failed: number
  /** Replies not (fully) delivered: a part failed, or there was no robotCode to address them. */
  replies_failed: number
  /** Texts read as the answer to (or a hint about) a waiting permission request or question. */
  steering: number
}

/**
 * Turns each stored text message into one agent turn on its key's session
 * and the turn's answer into robot messages, in order. While the session's
 * agent waits for its person (a permission request, a question), the
 * person's next text answers it instead (steering/).
 */
export class ChatAdapter {
  readonly counters: ChatCounters = { messages: 0, ignored: 0, turns: 0, parts_sent: 0, parts_failed: 0, replies_failed: 0, steering: 0 }
  readonly #deps: ChatAdapterDeps
  readonly #steering: ChatSteering
  /** Per session, the end of the last message put in its conversation: messages go out in order. */
  readonly #outbox = new WeakMap<ChatSession, Promise<void>>()

  constructor(deps: ChatAdapterDeps) {
    this.#deps = deps
    this.#steering = new ChatSteering({ runners: deps.turns.runners, say: (session, text) => void this.#say(session, text), log: deps.log })
  }

  /**
   * Queues the message on its session; the work runs later, in order per
   * key. A message to a session whose agent waits for an answer is that
   * answer (or gets a hint) at once: the turn it would queue behind is the
   * one waiting.
   */
  receive(message: ChatMessage): ChatSession {
    this.counters.messages++
    const waiting = this.#deps.sessions.get(sessionKey(message))
    if (waiting !== undefined && this.#steering.waiting(waiting.session_id)) {
      const session = this.#deps.sessions.touch(message)
      this.counters.steering++
      void this.#steering.answer(session, message.content.trim())
      return session
    }
    return this.#deps.sessions.enqueue(message, (session) => this.#work(session, message))
  }

  /** Notes a callback that is acknowledged but not worked on. */
  ignore(): void {
    this.counters.ignored++
  }

  async #work(session: ChatSession, message: ChatMessage): Promise<void> {
    const log = this.#deps.log.child({ session_id: session.session_id, key: sessionKey(message) })
    if (message.metadata.robot_code === undefined) {
      // No address for a reply: running the agent would only produce an answer nobody gets.
      this.counters.replies_failed++
      log.error({ code: 'CHAT_ROBOT_CODE_MISSING' }, 'chat message has no robot_code; not processed, no reply sent')
      return
    }
    const prompt = message.content.trim()
    if (prompt === '') {
      this.counters.ignored++
      log.info('chat message is blank; nothing to do')
      return
    }
    const text = await this.#answer(session, prompt, log)
    const parts = await this.#say(session, text, log)
    if (parts !== undefined) log.info({ parts }, 'chat reply sent')
  }

  /**
   * Puts `text` in the session's conversation after everything put there
   * before; settles with the number of parts sent, undefined when it failed.
   */
  #say(session: ChatSession, text: string, log = this.#deps.log.child({ session_id: session.session_id, key: session.key })): Promise<number | undefined> {
    const sent = (this.#outbox.get(session) ?? Promise.resolve()).then(() => this.#deliver(session, text, log))
    this.#outbox.set(
      session,
      sent.then(() => {}),
    )
    return sent
  }

  /** Sends one text as its numbered parts; a failed part is logged and counted, the rest are not sent. */
  async #deliver(session: ChatSession, text: string, log: Logger): Promise<number | undefined> {
    const { settings } = this.#deps
    const robotCode = session.robot_code
    if (robotCode === undefined) {
      this.counters.replies_failed++
      log.error({ code: 'CHAT_ROBOT_CODE_MISSING' }, 'chat session has no robot_code; message not sent')
      return undefined
    }
    const separator = settings.message_format === 'markdown' ? '\n' : ' '
    const parts = chunkMessage(text, { limit: settings.max_message_length, separator })
    for (const [i, part] of parts.entries()) {
      try {
        await this.#deps.robot.send(robotCode, sendBody(settings.message_format, part, session.user_id, settings.markdown_title))
        this.counters.parts_sent++
      } catch (err) {
        // The rest is not sent either: parts arrive in order or not at all.
        this.counters.parts_failed++
        this.counters.replies_failed++
        const error = err instanceof ChatError ? err : undefined
        log.error(
          { err, code: error?.code ?? 'CHAT_SEND_FAILED', status: error?.status, part: i + 1, parts: parts.length, parts_unsent: parts.length - i },
          'chat reply not delivered',
        )
        return undefined
      }
    }
    return parts.length
  }

  async #answer(session: ChatSession, prompt: string, log: Logger): Promise<string> {
    const { settings, turns } = this.#deps
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ServiceError('TURN_TIMEOUT', `no end of the turn within ${settings.turn_timeout} ms (chat.turn_timeout)`)),
        settings.turn_timeout,
      )
    })
    try {
      // The turn itself is not cancelled at the deadline; it detaches from the session when it ends.
      const request = { session_id: session.session_id, prompt, instructions: settings.system_prompt, engine: settings.engine }
      const outcome = await Promise.race([runTurn(turns, request, (event) => this.#steering.onEvent(session, event)), deadline])
      this.counters.turns++
      if (outcome.end !== 'completed') log.warn({ end: outcome.end, code: outcome.error?.code }, 'chat turn did not complete')
      return replyText(outcome)
    } catch (err) {
      const error = toServiceError(err)
      log.error({ err, code: error.code }, 'chat turn failed to start or to end')
      return replyText(undefined, error)
    } finally {
      clearTimeout(timer)
      this.#steering.turnEnded(session.session_id)
    }
  }
}

/** The text sent back for a turn: its answer, or what went wrong, so no message goes unanswered. Pure. */
export function replyText(outcome: TurnOutcome | undefined, startError?: { code: string; message: string }): string {
  if (outcome === undefined) {
    const error = startError ?? { code: 'INTERNAL', message: 'unknown failure' }
    return `The agent could not answer this message (${error.code}): ${error.message}. Please try again later.`
  }
  const answer = outcome.truncated ? `${outcome.answer.trim()}\n\n(The answer was longer than this and was cut.)` : outcome.answer.trim()
  switch (outcome.end) {
    case 'completed':
      return answer !== '' ? answer : '(The agent finished without an answer.)'
    case 'stopped':
      return answer !== '' ? `${answer}\n\n(The agent was stopped.)` : '(The agent was stopped.)'
    case 'error': {
      const failure = `The agent failed (${outcome.error?.code ?? 'INTERNAL'}): ${outcome.error?.message ?? 'unknown failure'}`
      return answer !== '' ? `${answer}\n\n${failure}` : failure
    }
  }
}
