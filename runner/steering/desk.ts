import { randomBytes } from 'node:crypto'
import {
  ServiceError,
  type Answers,
  type PendingRequests,
  type PermissionDecision,
  type PermissionRequest,
  type QuestionRequest,
  type ResolutionSource,
  type SteeringReply,
} from '../../contract/mod.ts'
import type { Approver, PermissionAnswer, PermissionAsk, QuestionAnswer, QuestionAsk } from '../engine/approver.ts'
import type { EventDraft } from '../event-draft.ts'
import { judge, type ApprovalPolicy } from './policy.ts'
import { alwaysRule, type ApprovalRule } from './rules.ts'

export interface SteeringDeskOptions {
  policy: ApprovalPolicy
  /** Publishes an event of the session (the running turn's id is added by the session). */
  emit(draft: EventDraft): void
  /** Told when the first request starts waiting and when the last one is settled (engine.timeout does not run meanwhile). */
  onWaiting?(waiting: boolean): void
  now?(): number
}

/** A request as it is asked: what the person is asked, and how the engine's ask is settled. */
type Asked =
  | { kind: 'permission'; request: PermissionRequest; ask: PermissionAsk; settle(answer: PermissionAnswer): void }
  | { kind: 'question'; request: QuestionRequest; ask: QuestionAsk; settle(answer: QuestionAnswer): void }

/** An asked request while it waits: its expiry timer, when it began, and what undoes its abort listener. */
type Pending = Asked & { timer: NodeJS.Timeout; since: number; cleanup(): void }

/** How many settled ids a session remembers, to tell ALREADY_ANSWERED from PERMISSION_NOT_FOUND. */
const SETTLED_KEPT = 1_000
const OPTIONS: PermissionDecision[] = ['allow_once', 'allow_always', 'deny']

/**
 * One session's steering desk: asks a person (a `permission_request` or
 * `question` event), takes the first valid reply, denies what nobody answers
 * in time, and remembers "allow always" answers for the rest of the session.
 * The engines reach it through the Approver port.
 */
export class SteeringDesk implements Approver {
  readonly #options: SteeringDeskOptions
  readonly #now: () => number
  readonly #pending = new Map<string, Pending>()
  readonly #settled = new Map<string, ResolutionSource>()
  readonly #remembered: ApprovalRule[] = []

  constructor(options: SteeringDeskOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** The "allow always" rules given so far in this session. */
  get remembered(): readonly ApprovalRule[] {
    return this.#remembered
  }

  permission(ask: PermissionAsk, signal?: AbortSignal): Promise<PermissionAnswer> {
    const { call } = ask
    const tool = { ...(call.toolUseId !== undefined && { id: call.toolUseId }), name: call.toolName, input: call.input }
    const verdict = judge(this.#options.policy, this.#remembered, call)
    if (verdict.verdict !== 'ask') {
      const decision = verdict.verdict === 'allow' ? 'allow_once' : 'deny'
      const data = `${verdict.verdict === 'allow' ? 'allowed' : 'denied'} by the rule ${verdict.rule}`
      this.#options.emit({ event: 'permission_resolved', data, permission_id: newId('per'), decision, source: 'rule', rule: verdict.rule, tool })
      return Promise.resolve(
        verdict.verdict === 'allow'
          ? { behavior: 'allow', input: call.input }
          : { behavior: 'deny', message: `The operator's rule ${verdict.rule} denies this tool call.` },
      )
    }
    const title = ask.title ?? titleOf(call.toolName, call.input)
    const request: PermissionRequest = {
      id: newId('per'),
      tool,
      title,
      options: OPTIONS,
      always: alwaysRule(call, ask.suggestion).text,
      expires_at: this.#now() + this.#options.policy.timeoutMs,
    }
    return new Promise((resolve) => {
      this.#wait({ kind: 'permission', request, ask, settle: resolve }, signal)
      this.#options.emit({ event: 'permission_request', data: title, permission: request })
    })
  }

  question(ask: QuestionAsk, signal?: AbortSignal): Promise<QuestionAnswer> {
    const request: QuestionRequest = { id: newId('que'), questions: ask.questions, expires_at: this.#now() + this.#options.policy.timeoutMs }
    return new Promise((resolve) => {
      this.#wait({ kind: 'question', request, ask, settle: resolve }, signal)
      this.#options.emit({ event: 'question', data: ask.questions[0]?.question ?? '', question: request })
    })
  }

  /** The requests still waiting, oldest first. */
  pending(): PendingRequests {
    const out: PendingRequests = { permissions: [], questions: [] }
    for (const entry of this.#pending.values()) {
      if (entry.kind === 'permission') out.permissions.push(entry.request)
      else out.questions.push(entry.request)
    }
    return out
  }

  /**
   * A person's answer. Throws PERMISSION_NOT_FOUND (no such request waits),
   * ALREADY_ANSWERED (it was settled) or BAD_REQUEST (the answer does not fit
   * the request); the first valid answer wins.
   */
  reply(reply: SteeringReply, by?: string): void {
    const entry = this.#pending.get(reply.id)
    if (!entry) {
      const settled = this.#settled.get(reply.id)
      if (settled)
        throw new ServiceError(
          'ALREADY_ANSWERED',
          `request ${reply.id} was settled already (${settled === 'client' ? 'another client answered it' : settled === 'timeout' ? 'it timed out' : 'its turn ended'})`,
        )
      throw new ServiceError('PERMISSION_NOT_FOUND', `no permission request or question ${reply.id} waits in this session`)
    }
    if (entry.kind === 'permission') {
      if (reply.kind !== 'permission')
        throw new ServiceError('BAD_REQUEST', `${reply.id} is a permission request: answer it with permission_reply and a decision`)
      if (!entry.request.options.includes(reply.decision))
        throw new ServiceError('BAD_REQUEST', `decision ${reply.decision} is not offered; choose one of ${entry.request.options.join(', ')}`)
      if (reply.decision === 'allow_always') this.#remembered.push(alwaysRule(entry.ask.call, entry.ask.suggestion))
      const answer: PermissionAnswer =
        reply.decision === 'deny' ? { behavior: 'deny', message: denyMessage(reply.message) } : { behavior: 'allow', input: entry.ask.call.input }
      this.#finish(entry, 'client', reply.decision, answer, by)
      return
    }
    if (reply.kind === 'permission') throw new ServiceError('BAD_REQUEST', `${reply.id} is a question: answer it with answer (or reject)`)
    if (reply.kind === 'reject') return this.#finish(entry, 'client', 'reject', { behavior: 'reject', message: rejectMessage(reply.message) }, by)
    const problem = answersProblem(entry.request, reply.answers)
    if (problem) throw new ServiceError('BAD_REQUEST', problem)
    this.#finish(entry, 'client', 'answer', { behavior: 'answer', answers: reply.answers }, by)
  }

  /** Settles every waiting request (the turn ended, was stopped, or the session closed): denied, rejected. */
  endTurn(): void {
    for (const entry of [...this.#pending.values()]) this.#expire(entry, 'turn_ended')
  }

  #wait(partial: Asked, signal?: AbortSignal): void {
    const onAbort = () => this.#expire(entry, 'turn_ended')
    const timer = setTimeout(() => this.#expire(entry, 'timeout'), Math.max(0, partial.request.expires_at - this.#now()))
    timer.unref?.()
    const entry = { ...partial, timer, since: this.#now(), cleanup: () => signal?.removeEventListener('abort', onAbort) } as Pending
    signal?.addEventListener('abort', onAbort, { once: true })
    if (this.#pending.size === 0) this.#options.onWaiting?.(true)
    this.#pending.set(entry.request.id, entry)
    if (signal?.aborted) queueMicrotask(onAbort)
  }

  #expire(entry: Pending, source: 'timeout' | 'turn_ended'): void {
    if (this.#pending.get(entry.request.id) !== entry) return
    const why = source === 'timeout' ? `No one answered within ${seconds(this.#options.policy.timeoutMs)}` : 'The turn ended before anyone answered'
    if (entry.kind === 'permission') this.#finish(entry, source, 'deny', { behavior: 'deny', message: `${why}; the tool call was denied.` })
    else this.#finish(entry, source, 'reject', { behavior: 'reject', message: `${why}; the question was not answered.` })
  }

  #finish(
    entry: Pending,
    source: ResolutionSource,
    decision: PermissionDecision | 'answer' | 'reject',
    answer: PermissionAnswer | QuestionAnswer,
    by?: string,
  ): void {
    this.#pending.delete(entry.request.id)
    clearTimeout(entry.timer)
    entry.cleanup()
    this.#settled.set(entry.request.id, source)
    if (this.#settled.size > SETTLED_KEPT) this.#settled.delete(this.#settled.keys().next().value!)
    const who = by === undefined ? {} : { by }
    const waited_ms = Math.max(0, Math.round(this.#now() - entry.since))
    if (entry.kind === 'permission') {
      const data =
        decision === 'deny'
          ? source === 'client'
            ? 'denied'
            : `denied: ${source === 'timeout' ? 'timed out' : 'the turn ended'}`
          : decision === 'allow_always'
            ? 'allowed for the rest of the session'
            : 'allowed once'
      this.#options.emit({
        event: 'permission_resolved',
        data,
        permission_id: entry.request.id,
        decision: decision as PermissionDecision,
        source,
        ...who,
        waited_ms,
      })
      entry.settle(answer as PermissionAnswer)
    } else {
      const answers = answer.behavior === 'answer' ? { answers: answer.answers } : {}
      const data =
        answer.behavior === 'answer' ? 'answered' : source === 'client' ? 'rejected' : `not answered: ${source === 'timeout' ? 'timed out' : 'the turn ended'}`
      this.#options.emit({ event: 'question_resolved', data, question_id: entry.request.id, source, ...answers, ...who, waited_ms })
      entry.settle(answer as QuestionAnswer)
    }
    if (this.#pending.size === 0) this.#options.onWaiting?.(false)
  }
}

/** Why an answer does not fit its questions, or undefined when it does. */
export function answersProblem(request: QuestionRequest, answers: Answers): string | undefined {
  if (answers.length !== request.questions.length)
    return `answers has ${answers.length} lists; the question has ${request.questions.length} (one list of labels per question)`
  for (const [i, question] of request.questions.entries()) {
    const chosen = answers[i]!
    if (!question.multi_select && chosen.length !== 1) return `question ${i + 1} ("${question.question}") takes one answer, not ${chosen.length}`
  }
  return undefined
}

/** A one-line title for a tool call: the command, the path or the URL it names. */
export function titleOf(toolName: string, input: unknown): string {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {}
  const subject = [fields.command, fields.file_path, fields.notebook_path, fields.path, fields.url].find((value) => typeof value === 'string') as
    | string
    | undefined
  const line = subject === undefined ? toolName : `${toolName}: ${subject.split('\n')[0]}`
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

function denyMessage(message: string | undefined): string {
  return message ? `The user denied this tool call: ${message}` : 'The user denied this tool call.'
}

function rejectMessage(message: string | undefined): string {
  return message ? `The user declined to answer: ${message}` : 'The user declined to answer.'
}

function seconds(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`
}

function newId(prefix: 'per' | 'que'): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`
}
