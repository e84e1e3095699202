import type { Logger } from 'pino'
import { steeringIdOf, toServiceError, type ServiceEvent } from '../../../contract/mod.ts'
import type { Runners } from '../../runners.ts'
import type { ChatSession } from '../sessions.ts'
import { replyErrorText, requestText, resolvedText } from './messages.ts'
import type { OpenRequest } from './open-request.ts'
import { parseReply } from './parse-reply.ts'

export interface ChatSteeringDeps {
  runners: Pick<Runners, 'send'>
  /** Puts a text in the session's conversation, after what was put there before. */
  say: (session: ChatSession, text: string) => void
  log: Logger
}

/**
 * Steering in chat conversations: the requests of each chat session that wait
 * for its person, oldest first. Only the oldest is shown; the person's next
 * text answers it (or gets a hint), and the next one is shown once it is
 * settled, here or elsewhere.
 */
export class ChatSteering {
  readonly #deps: ChatSteeringDeps
  readonly #open = new Map<string, OpenRequest[]>()
  /** Requests whose answer from here is on its way to the runner: whether they were settled meanwhile. */
  readonly #sending = new Map<string, { sessionId: string; settled: boolean }>()

  constructor(deps: ChatSteeringDeps) {
    this.#deps = deps
  }

  /** Whether a request of the session waits for its person's next text. */
  waiting(sessionId: string): boolean {
    return (this.#open.get(sessionId)?.length ?? 0) > 0
  }

  /** Sees each event of a turn of the session. */
  onEvent(session: ChatSession, event: ServiceEvent): void {
    const sessionId = session.session_id
    if (event.event === 'permission_request') this.#add(session, { kind: 'permission', request: event.permission })
    else if (event.event === 'question') this.#add(session, { kind: 'question', request: event.question })
    else if (event.event === 'permission_resolved' || event.event === 'question_resolved') {
      const id = steeringIdOf(event)
      const at = this.#remove(sessionId, id)
      if (at === -1) {
        // Not open here: a rule decided it, or this conversation's own answer (on its way, or delivered) settled it.
        const sending = this.#sending.get(id)
        if (sending) sending.settled = true
        return
      }
      // This person's own answer, delivered after all (its command had failed): nothing to tell.
      const text = event.by === `chat:${session.user_id}` ? undefined : resolvedText(event)
      if (text !== undefined) this.#deps.say(session, text)
      if (at === 0) this.#showFirst(session)
    }
  }

  /** The turn is over: whatever it asked is settled (turn_ended) and no longer open here. */
  turnEnded(sessionId: string): void {
    this.#open.delete(sessionId)
    for (const sending of this.#sending.values()) if (sending.sessionId === sessionId) sending.settled = true
  }

  /**
   * Reads the person's text as the answer to the oldest open request and
   * sends it to the runner; a text that answers nothing gets the hint.
   */
  async answer(session: ChatSession, text: string): Promise<void> {
    const sessionId = session.session_id
    const open = this.#open.get(sessionId)?.[0]
    if (open === undefined) return
    const parsed = parseReply(text, open)
    if ('hint' in parsed) {
      this.#deps.say(session, parsed.hint)
      return
    }
    const log = this.#deps.log.child({ session_id: sessionId, request_id: open.request.id })
    const { id } = open.request
    // Out of the queue before the await: the runner's resolved event for this answer is then not told again.
    this.#remove(sessionId, id)
    const sending = { sessionId, settled: false }
    this.#sending.set(id, sending)
    try {
      await this.#deps.runners.send({ type: 'reply', session_id: sessionId, reply: parsed.reply, by: `chat:${session.user_id}` })
      log.info({ kind: parsed.reply.kind }, 'chat steering reply delivered')
    } catch (err) {
      const error = toServiceError(err)
      log.warn({ err, code: error.code }, 'chat steering reply refused')
      if (error.code === 'ALREADY_ANSWERED' || error.code === 'PERMISSION_NOT_FOUND') this.#deps.say(session, replyErrorText(error))
      else if (!sending.settled) {
        // A failure with no settlement seen (no runner answered, say): open again, the person may answer again.
        this.#open.set(sessionId, [open, ...(this.#open.get(sessionId) ?? [])])
        this.#deps.say(session, replyErrorText(error))
        return
      }
    } finally {
      this.#sending.delete(id)
    }
    this.#showFirst(session)
  }

  #add(session: ChatSession, open: OpenRequest): void {
    const sessionId = session.session_id
    const queue = this.#open.get(sessionId) ?? []
    queue.push(open)
    this.#open.set(sessionId, queue)
    if (queue.length === 1) this.#deps.say(session, requestText(open))
  }

  /** Removes the request; where it was in the queue (0: the one shown), -1 when it was not open. */
  #remove(sessionId: string, id: string): number {
    const queue = this.#open.get(sessionId) ?? []
    const at = queue.findIndex((open) => open.request.id === id)
    if (at === -1) return -1
    queue.splice(at, 1)
    if (queue.length === 0) this.#open.delete(sessionId)
    return at
  }

  /** Shows the request now first in line, if any. */
  #showFirst(session: ChatSession): void {
    const first = this.#open.get(session.session_id)?.[0]
    if (first !== undefined) this.#deps.say(session, requestText(first))
  }
}
