import type { EventOf, QuestionItem, QuestionRequest } from '../../../contract/mod.ts'
import { DECISION_WORDS, type OpenRequest } from './open-request.ts'

/**
 * The texts steering puts in a conversation: the numbered request, the hint
 * for a text that answers nothing, a request settled elsewhere, a reply the
 * runner refused. Pure.
 */

/** The numbered message announcing a request. */
export function requestText(open: OpenRequest): string {
  if (open.kind === 'permission') return `The agent wants to run ${open.request.title}. ${permissionChoices(open)}.`
  const { questions } = open.request
  if (questions.length === 1) return `The agent asks: ${questionBlock(questions[0]!)}\n${questionInstructions(open.request)}`
  const blocks = questions.map((item, i) => `Q${i + 1}. ${questionBlock(item)}`)
  return `The agent asks ${questions.length} questions:\n\n${blocks.join('\n\n')}\n\n${questionInstructions(open.request)}`
}

/** What a text that answers nothing is told; the request stays open. */
export function hintText(open: OpenRequest): string {
  if (open.kind === 'permission') return `The agent is waiting for your answer about ${open.request.title}. ${permissionChoices(open)}.`
  return `The agent is waiting for your answer to its question. ${questionInstructions(open.request)}`
}

/** A request settled somewhere else (another client, the clock, the turn's end); undefined for a rule's decision, which nobody was asked. */
export function resolvedText(event: EventOf<'permission_resolved'> | EventOf<'question_resolved'>): string | undefined {
  if (event.event === 'permission_resolved') {
    const outcome = event.decision === 'allow_once' ? 'Allowed' : event.decision === 'allow_always' ? 'Allowed for this session' : 'Denied'
    switch (event.source) {
      case 'client':
        return `${outcome} from another client.`
      case 'timeout':
        return 'No answer in time: denied.'
      case 'turn_ended':
        return 'The agent stopped waiting (its turn ended): denied.'
      case 'rule':
        return undefined
    }
  }
  switch (event.source) {
    case 'client':
      return event.answers === undefined
        ? 'Skipped from another client.'
        : `Answered from another client: ${event.answers.map((chosen) => chosen.join(', ')).join('; ')}.`
    case 'timeout':
      return 'No answer in time: the question was skipped.'
    case 'turn_ended':
      return 'The agent stopped waiting (its turn ended): the question was skipped.'
    case 'rule':
      return undefined
  }
}

/** What the person is told when the runner refused their answer (by error code). */
export function replyErrorText(error: { code: string; message: string }): string {
  switch (error.code) {
    case 'ALREADY_ANSWERED':
      return 'Too late: this request was settled already (it timed out or another client answered it).'
    case 'PERMISSION_NOT_FOUND':
      return 'This request is no longer open.'
    default:
      return `Your answer could not be delivered (${error.code}): ${error.message}. Please reply again.`
  }
}

function permissionChoices(open: Extract<OpenRequest, { kind: 'permission' }>): string {
  const choices = open.request.options.map((decision, i) => `${i + 1} to ${DECISION_WORDS[decision]}`)
  const listed = choices.length > 1 ? `${choices.slice(0, -1).join(', ')}, ${choices.at(-1)}` : choices.join('')
  return `Reply ${listed}`
}

function questionBlock(item: QuestionItem): string {
  const options = item.options.map((option, i) => `${i + 1}. ${option.label}${option.description ? ` (${option.description})` : ''}`)
  return [`${item.question}${item.multi_select ? ' (several allowed)' : ''}`, ...options].join('\n')
}

function questionInstructions(request: QuestionRequest): string {
  const several = request.questions.some((item) => item.multi_select)
  const one = several ? "an option's number or name (several: separated by commas or spaces)" : "an option's number or name"
  return request.questions.length === 1
    ? `Reply with ${one}, or reject to skip.`
    : `Reply with one answer per line (or separated by ;), in order: ${one}; or reject to skip.`
}
