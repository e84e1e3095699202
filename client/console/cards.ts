/**
 * The console's steering cards: a tool call waiting for approval (Allow once,
 * Allow always, Deny) and the agent's questions (options as buttons, or
 * checkboxes when several may be chosen; Submit, Reject). A card shows the
 * outcome and loses its buttons when the request is settled, by this page or
 * by anyone else. What the agent wrote goes in as text only.
 */
import type { Answers, PermissionDecision } from '../../contract/steering.ts'
import type { Session } from '../session.ts'
import type { PermissionRequested, PermissionResolved, QuestionAsked, QuestionResolved } from '../steering.ts'
import type { SteeringContext } from '../steering-watch.ts'
import { add, button } from './dom.ts'

const DECISION_LABELS: Record<PermissionDecision, string> = { allow_once: 'Allow once', allow_always: 'Allow always', deny: 'Deny' }

export function permissionCard(root: HTMLElement, session: Session, request: PermissionRequested, context: SteeringContext<PermissionResolved>): HTMLElement {
  const { id, tool, title, options, always } = request.permission
  const card = add(root, 'div', 'card permission')
  card.dataset.id = id
  add(card, 'div', 'card-title', `${tool.name} asks to run: ${title}`)
  add(card, 'pre', 'input', JSON.stringify(tool.input, null, 2))
  if (always !== undefined) add(card, 'div', 'always', `Allow always adds: ${always}`)
  const actions = add(card, 'div', 'row actions')
  const status = add(card, 'div', 'outcome')
  for (const decision of options) {
    button(actions, `decision ${decision}`, DECISION_LABELS[decision], () => {
      lock(actions)
      session.permissionReply(id, decision).catch((err: unknown) => {
        status.textContent = `not taken: ${(err as Error).message}`
        unlock(actions, context.signal)
      })
    })
  }
  void context.resolution.then((resolved) => settle(card, actions, status, `${DECISION_LABELS[resolved.decision]} (${who(resolved.source, resolved.by)})`))
  card.scrollIntoView({ block: 'end' })
  return card
}

export function questionCard(root: HTMLElement, session: Session, request: QuestionAsked, context: SteeringContext<QuestionResolved>): HTMLElement {
  const { id, questions } = request.question
  const card = add(root, 'div', 'card question')
  card.dataset.id = id
  const chosen: string[][] = questions.map(() => [])
  questions.forEach((item, index) => {
    const block = add(card, 'fieldset', 'question-item')
    add(block, 'legend', '', item.header ? `${item.header}: ${item.question}` : item.question)
    for (const option of item.options) {
      if (item.multi_select) {
        const label = add(block, 'label', 'choice')
        const box = document.createElement('input')
        box.type = 'checkbox'
        box.value = option.label
        box.addEventListener(
          'change',
          () => (chosen[index] = box.checked ? [...chosen[index]!, option.label] : chosen[index]!.filter((l) => l !== option.label)),
        )
        label.prepend(box)
        label.append(document.createTextNode(` ${option.label}`))
      } else {
        const choice = button(block, 'choice', option.label, () => {
          chosen[index] = [option.label]
          for (const other of block.querySelectorAll('button.choice')) other.classList.toggle('chosen', other === choice)
        })
      }
      if (option.description) choiceHint(block, option.description)
    }
  })
  const actions = add(card, 'div', 'row actions')
  const status = add(card, 'div', 'outcome')
  const sent = (reply: Promise<unknown>) => {
    lock(actions)
    reply.catch((err: unknown) => {
      status.textContent = `not taken: ${(err as Error).message}`
      unlock(actions, context.signal)
    })
  }
  button(actions, 'submit', 'Submit', () => {
    if (chosen.some((labels) => labels.length === 0)) {
      status.textContent = 'choose an answer to every question'
      return
    }
    sent(session.answer(id, chosen as Answers))
  })
  button(actions, 'reject', 'Reject', () => sent(session.reject(id, 'rejected from the console')))
  void context.resolution.then((resolved) =>
    settle(
      card,
      actions,
      status,
      `${resolved.answers ? `Answered: ${resolved.answers.map((labels) => labels.join(', ')).join(' / ')}` : 'Rejected'} (${who(resolved.source, resolved.by)})`,
    ),
  )
  card.scrollIntoView({ block: 'end' })
  return card
}

function choiceHint(parent: HTMLElement, text: string): void {
  add(parent, 'span', 'hint', text)
}

function who(source: string, by: string | undefined): string {
  return by === undefined ? source : `${source}, ${by}`
}

function lock(actions: HTMLElement): void {
  for (const control of actions.querySelectorAll('button')) control.disabled = true
}

function unlock(actions: HTMLElement, signal: AbortSignal): void {
  if (!signal.aborted) for (const control of actions.querySelectorAll('button')) control.disabled = false
}

/** Settled (here or elsewhere): the buttons go, the outcome stays. */
function settle(card: HTMLElement, actions: HTMLElement, status: HTMLElement, outcome: string): void {
  actions.remove()
  for (const control of card.querySelectorAll('input, button')) (control as HTMLInputElement).disabled = true
  card.classList.add('settled')
  status.textContent = outcome
}
