import { z } from 'zod'

/**
 * Steering: a tool call the agent may make only with a person's yes, and a
 * question the agent asks the person. The runner asks (a `permission_request`
 * or `question` event, stored with a `seq` so a client that attaches later
 * sees it), a client answers (a `permission_reply`, `answer` or `reject`
 * frame, or the HTTP and OpenCode routes), the runner that owns the session
 * takes the first valid answer and tells every client (`permission_resolved`,
 * `question_resolved`).
 */

/** What a person may answer to a permission request. */
export const PermissionDecision = z.enum(['allow_once', 'allow_always', 'deny'])
export type PermissionDecision = z.output<typeof PermissionDecision>

/** Who settled a request: a person at a client, the clock, a rule, or the turn ending first. */
export const ResolutionSource = z.enum(['client', 'timeout', 'rule', 'turn_ended'])
export type ResolutionSource = z.output<typeof ResolutionSource>

/** A request id the runner chose: `per_…` for permissions, `que_…` for questions. */
export const SteeringId = z.string().min(1).max(100)

export const PermissionRequest = z.object({
  id: SteeringId,
  /** The tool call waiting for the answer, as the agent wrote it. */
  tool: z.object({ id: z.string().optional(), name: z.string(), input: z.unknown() }),
  /** One line for a person: what the call does. */
  title: z.string(),
  options: z.array(PermissionDecision),
  /** What `allow_always` allows for the rest of the session, as a rule (`Bash(git status:*)`). */
  always: z.string().optional(),
  /** Epoch ms: unanswered by then, the call is denied. */
  expires_at: z.number().int(),
})
export type PermissionRequest = z.output<typeof PermissionRequest>

export const QuestionOption = z.object({ label: z.string(), description: z.string().optional() })

export const QuestionItem = z.object({
  question: z.string(),
  /** A short chip for the question (Claude Code: at most 12 characters). */
  header: z.string().optional(),
  options: z.array(QuestionOption),
  /** Several labels may be chosen. */
  multi_select: z.boolean(),
})
export type QuestionItem = z.output<typeof QuestionItem>

export const QuestionRequest = z.object({
  id: SteeringId,
  questions: z.array(QuestionItem).min(1),
  expires_at: z.number().int(),
})
export type QuestionRequest = z.output<typeof QuestionRequest>

/** One list of chosen labels per question, in the questions' order. */
export const Answers = z.array(z.array(z.string().max(10_000)).min(1))
export type Answers = z.output<typeof Answers>

/** A client's answer as it travels to the runner that asked. */
export const SteeringReply = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('permission'), id: SteeringId, decision: PermissionDecision, message: z.string().max(10_000).optional() }),
  z.object({ kind: z.literal('answer'), id: SteeringId, answers: Answers }),
  z.object({ kind: z.literal('reject'), id: SteeringId, message: z.string().max(10_000).optional() }),
])
export type SteeringReply = z.output<typeof SteeringReply>

/** The requests of a session still waiting for a person. */
export const PendingRequests = z.object({ permissions: z.array(PermissionRequest), questions: z.array(QuestionRequest) })
export type PendingRequests = z.output<typeof PendingRequests>

/** `POST /v1/sessions/{id}/reply`: one answer, the same fields as the WebSocket's frames. */
export const ReplyBody = z.union([
  z.strictObject({ permission_id: SteeringId, decision: PermissionDecision, message: z.string().max(10_000).optional() }),
  z.strictObject({ question_id: SteeringId, answers: Answers }),
  z.strictObject({ question_id: SteeringId, reject: z.literal(true), message: z.string().max(10_000).optional() }),
])
export type ReplyBody = z.output<typeof ReplyBody>

/** The reply a body asks for. */
export function replyOfBody(body: ReplyBody): SteeringReply {
  if ('permission_id' in body)
    return { kind: 'permission', id: body.permission_id, decision: body.decision, ...(body.message !== undefined && { message: body.message }) }
  if ('answers' in body) return { kind: 'answer', id: body.question_id, answers: body.answers }
  return { kind: 'reject', id: body.question_id, ...(body.message !== undefined && { message: body.message }) }
}
