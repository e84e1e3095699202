import type { Answers, PermissionDecision, QuestionItem } from '../../contract/steering.ts'
import type { Session } from '../session.ts'
import type { PermissionRequested, QuestionAsked } from '../steering.ts'
import type { Outputs } from './print.ts'

/**
 * How `agent-runtime run` answers the agent's requests for a person: asking
 * on the terminal, `--approve` (every tool call allowed once, each question's
 * first option), `--deny` (every call denied, every question rejected), or,
 * with no terminal and neither flag, saying how it could have been answered
 * and denying.
 */
export type SteeringMode = 'ask' | 'approve' | 'deny' | 'unattended'

/** Where the CLI asks a person; absent when stdin is not a terminal. */
export type AskLine = (prompt: string, signal: AbortSignal) => Promise<string>

/** What a denied call or a rejected question tells the agent when nobody could be asked. */
export const UNATTENDED_MESSAGE = 'no one could be asked: agent-runtime run had no terminal and neither --approve nor --deny'

const DECISIONS: Record<string, PermissionDecision> = { y: 'allow_once', yes: 'allow_once', a: 'allow_always', always: 'allow_always', n: 'deny', no: 'deny' }

/** The decision a typed line means; undefined: ask again. Pure. */
export function decisionOfLine(line: string): PermissionDecision | undefined {
  return DECISIONS[line.trim().toLowerCase()]
}

/** The labels a typed line chooses: option numbers (several, comma- or space-separated, for a multi-select question) or free text. Pure. */
export function choiceOfLine(line: string, item: QuestionItem): string[] | undefined {
  const text = line.trim()
  if (text === '') return undefined
  if (!/^\d+([\s,]+\d+)*$/.test(text)) return [text]
  const numbers = [...new Set(text.split(/[\s,]+/).map(Number))]
  if (numbers.some((n) => n < 1 || n > item.options.length)) return undefined
  if (numbers.length > 1 && !item.multi_select) return undefined
  return numbers.map((n) => item.options[n - 1]!.label)
}

/** A permission request as the terminal shows it. Pure. */
export function permissionText(request: PermissionRequested): string {
  const { tool, title, always } = request.permission
  const lines = [`permission: ${tool.name} wants to run: ${title}`, `  input: ${JSON.stringify(tool.input)}`]
  if (always !== undefined) lines.push(`  always would allow: ${always}`)
  return `${lines.join('\n')}\n`
}

/** One question with its options numbered. Pure. */
export function questionText(item: QuestionItem): string {
  const lines = [`question${item.header ? ` (${item.header})` : ''}: ${item.question}`]
  item.options.forEach((option, index) => lines.push(`  ${index + 1}. ${option.label}${option.description ? ` — ${option.description}` : ''}`))
  return `${lines.join('\n')}\n`
}

/** What an unattended run prints so a person knows how the request could have been answered. Pure. */
export function unattendedText(sessionId: string, request: PermissionRequested | QuestionAsked): string {
  const what = request.event === 'permission_request' ? permissionText(request) : request.question.questions.map(questionText).join('')
  const body =
    request.event === 'permission_request'
      ? `{"permission_id":"${request.permission.id}","decision":"allow_once"}`
      : `{"question_id":"${request.question.id}","answers":[["<label>"]]}`
  return (
    what +
    `no terminal to ask on, so it is ${request.event === 'permission_request' ? 'denied' : 'rejected'}. ` +
    `Rerun with --approve (or --deny), or answer from another client while it waits: POST /v1/sessions/${sessionId}/reply ${body}\n`
  )
}

/** The first option of each question (`--approve`); undefined when one has none. Pure. */
export function firstOptions(items: QuestionItem[]): Answers | undefined {
  const answers = items.map((item) => item.options[0]?.label)
  return answers.every((label) => label !== undefined) ? answers.map((label) => [label]) : undefined
}

/** Registers the mode's handlers on the session; returns the unsubscribe. */
export function steer(session: Session, mode: SteeringMode, io: Outputs & { ask?: AskLine | undefined }): () => void {
  // One question on the terminal at a time: requests that come together are asked in turn.
  let terminal = Promise.resolve()
  const inTurn = (run: () => Promise<void>) => (terminal = terminal.then(run, run))
  const failed = (what: string) => (err: unknown) => io.err(`${what}: ${(err as Error).message}\n`)

  const offPermission = session.onPermission((request, { signal }) => {
    const id = request.permission.id
    const reply = (decision: PermissionDecision, message?: string) => session.permissionReply(id, decision, message).then(() => {}, failed('permission reply'))
    if (mode === 'approve') return void reply('allow_once')
    if (mode === 'deny') return void reply('deny', 'denied by agent-runtime run --deny')
    if (mode === 'unattended' || io.ask === undefined) {
      io.err(unattendedText(session.id, request))
      return void reply('deny', UNATTENDED_MESSAGE)
    }
    const ask = io.ask
    void inTurn(async () => {
      if (signal.aborted) return
      io.err(permissionText(request))
      for (;;) {
        const line = await ask('allow? [y] once, [a] always, [n] deny: ', signal).catch(() => undefined)
        if (line === undefined || signal.aborted) return
        const decision = decisionOfLine(line)
        if (decision !== undefined) return reply(decision)
      }
    })
  })

  const offQuestion = session.onQuestion((request, { signal }) => {
    const { id, questions } = request.question
    const answer = (answers: Answers) => session.answer(id, answers).then(() => {}, failed('answer'))
    const reject = (message: string) => session.reject(id, message).then(() => {}, failed('reject'))
    const first = firstOptions(questions)
    if (mode === 'approve' && first !== undefined) return void answer(first)
    if (mode === 'approve' || mode === 'deny')
      return void reject(`rejected by agent-runtime run --${mode}${mode === 'approve' ? ' (a question without options)' : ''}`)
    if (mode === 'unattended' || io.ask === undefined) {
      io.err(unattendedText(session.id, request))
      return void reject(UNATTENDED_MESSAGE)
    }
    const ask = io.ask
    void inTurn(async () => {
      const answers: Answers = []
      for (const item of questions) {
        if (signal.aborted) return
        io.err(questionText(item))
        for (;;) {
          const line = await ask(item.multi_select ? 'numbers (e.g. 1,3) or text: ' : 'number or text: ', signal).catch(() => undefined)
          if (line === undefined || signal.aborted) return
          const chosen = choiceOfLine(line, item)
          if (chosen === undefined) continue
          answers.push(chosen)
          break
        }
      }
      await answer(answers)
    })
  })

  return () => {
    offPermission()
    offQuestion()
  }
}
