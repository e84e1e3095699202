import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { JSON_TYPE, messageJson } from '../message-json.ts'
import { toPromptInput } from '../prompt-input.ts'
import { parseBody } from '../../json-body.ts'
import { PromptBody } from '../schemas/request.ts'
import type { AcceptedPrompt } from '../sessions.ts'
import type { IdParams, RouteContext } from './context.ts'

/**
 * Prompts. `/prompt_async` and the spec's body (`prompt`) answer 202 at once,
 * the output comes on the event streams. OpenCode's body (`parts`) on
 * `/message` waits for the turn and answers 200 `{info, parts}` like an
 * OpenCode server (`opencode run` depends on it).
 */
/**
 * How long a blocking prompt's answer trails the turn's last events. A client
 * reads the events and the answer on two connections; `opencode run` exits as
 * soon as the answer arrives, and would lose the turn's last events
 * (step_finish) if both came at once. The real server answers well after them too.
 */
export const BLOCKING_ANSWER_DELAY_MS = 100

export function promptRoutes(app: FastifyInstance, context: RouteContext): void {
  const { sessions, defaultProvider, tenant } = context

  app.post<IdParams>('/session/:id/message', async (request, reply) => {
    const input = toPromptInput(parseBody(PromptBody, request.body), defaultProvider)
    const accepted = await sessions.prompt(request.params.id, tenant(request), input)
    if (input.shape === 'spec') return accepted202(reply, request.params.id, accepted)
    const end = await accepted.ended
    await sleep(BLOCKING_ANSWER_DELAY_MS)
    if (!end.message) {
      return reply.code(409).send({ name: 'MessageAbortedError', data: { message: 'the prompt was stopped before its turn started' } })
    }
    // A long turn's answer is large: serialized a slice at a time (message-json.ts).
    return reply.type(JSON_TYPE).send(messageJson(end.message))
  })

  app.post<IdParams>('/session/:id/prompt_async', async (request, reply) => {
    const input = toPromptInput(parseBody(PromptBody, request.body), defaultProvider)
    return accepted202(reply, request.params.id, await sessions.prompt(request.params.id, tenant(request), input))
  })
}

function accepted202(reply: FastifyReply, sessionId: string, accepted: AcceptedPrompt) {
  return reply.code(202).send({ session_id: sessionId, turn_id: accepted.turnId, message_id: accepted.plan.userMessageID })
}
