import type { PermissionDecision, QuestionItem, SteeringReply } from '../../../contract/mod.ts'
import { hintText } from './messages.ts'
import type { OpenRequest } from './open-request.ts'

/** A person's text read against the open request: the reply it gives, or the hint it gets. */
export type ParsedReply = { reply: SteeringReply } | { hint: string }

const DECISION_OF_WORD: Record<string, PermissionDecision> = {
  allow: 'allow_once',
  'allow once': 'allow_once',
  once: 'allow_once',
  yes: 'allow_once',
  always: 'allow_always',
  'allow always': 'allow_always',
  deny: 'deny',
  no: 'deny',
}
const REJECT_WORDS = new Set(['reject', 'skip'])

/**
 * Reads a text as the answer to `open`. Permissions: the option's number,
 * `allow`, `always`, `deny`/`no`, optionally `: a message` after it (the deny
 * reason the agent reads). Questions: an option's number or label (a
 * multi-select question: several, separated by commas or spaces; several
 * questions: one answer per line or `;`), or `reject`/`skip` with an optional
 * `: message`. Anything else: the hint. Pure.
 */
export function parseReply(text: string, open: OpenRequest): ParsedReply {
  const hint = { hint: hintText(open) }
  if (open.kind === 'permission') {
    const { head, message } = splitMessage(text)
    const number = /^\d+$/.test(head) ? open.request.options[Number(head) - 1] : undefined
    const decision = number ?? DECISION_OF_WORD[head]
    if (decision === undefined || !open.request.options.includes(decision)) return hint
    return { reply: { kind: 'permission', id: open.request.id, decision, ...(message !== undefined && { message }) } }
  }
  const { questions } = open.request
  const parts = questions.length === 1 ? [text] : text.split(/[\n;]/).filter((part) => part.trim() !== '')
  if (parts.length === questions.length) {
    const answers = questions.map((item, i) => choose(parts[i]!, item))
    if (answers.every((chosen) => chosen !== undefined)) return { reply: { kind: 'answer', id: open.request.id, answers } }
  }
  const { head, message } = splitMessage(text)
  if (REJECT_WORDS.has(head)) return { reply: { kind: 'reject', id: open.request.id, ...(message !== undefined && { message }) } }
  return hint
}

/** The labels a text picks of one question, or undefined when it picks none or does not fit. */
function choose(text: string, item: QuestionItem): string[] | undefined {
  const whole = pick(normal(text), item)
  if (whole !== undefined) return [whole]
  if (!item.multi_select) return undefined
  // Labels may hold spaces: split on commas first, then on commas and spaces.
  for (const separator of [/,/, /[\s,]+/]) {
    const tokens = normal(text)
      .split(separator)
      .map((token) => token.trim())
      .filter((token) => token !== '')
    const picked = tokens.map((token) => pick(token, item))
    if (tokens.length > 0 && picked.every((label) => label !== undefined)) return [...new Set(picked as string[])]
  }
  return undefined
}

/** The label a normalized token names: its 1-based number or the label itself (case-insensitive). */
function pick(token: string, item: QuestionItem): string | undefined {
  if (/^\d+$/.test(token)) return item.options[Number(token) - 1]?.label
  return item.options.find((option) => normal(option.label) === token)?.label
}

/** `deny: not that file` → the word and the message. */
function splitMessage(text: string): { head: string; message?: string } {
  const colon = text.indexOf(':')
  if (colon === -1) return { head: normal(text) }
  const message = text.slice(colon + 1).trim()
  return { head: normal(text.slice(0, colon)), ...(message !== '' && { message }) }
}

/** Lower case, spaces collapsed, a closing full stop or exclamation mark dropped. */
function normal(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.!]+$/, '')
}
