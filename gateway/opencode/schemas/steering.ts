import { z } from 'zod'
import { Answers } from '../../../contract/mod.ts'

/**
 * Steering in OpenCode 1.18.33's shapes (its GET /doc): a tool call waiting for
 * a person (`PermissionRequest`; `PermissionV2Request` on the `/api` routes)
 * and the agent's questions (`QuestionRequest`). Ids are the service's own
 * (`per_…`, `que_…`), so an answer goes back to the request it is about.
 */

/** The tool call a request is about: its assistant message and the call's id (a tool part's `callID`). */
export const PermissionTool = z.object({ messageID: z.string(), callID: z.string() })
export type PermissionTool = z.output<typeof PermissionTool>

/** OpenCode's PermissionRequest (event `permission.asked`, GET /permission). */
export const Permission = z.object({
  id: z.string(),
  sessionID: z.string(),
  /** OpenCode's permission name for the tool: bash, edit, read, webfetch…, else the tool's name. */
  permission: z.string(),
  /** What the call touches: the command, the path, the URL… (`*` when nothing narrower is known). */
  patterns: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  /** The patterns "always" allows for the rest of the session; empty when "always" adds no rule. */
  always: z.array(z.string()),
  tool: PermissionTool.optional(),
})
export type Permission = z.output<typeof Permission>

/** The same request on the `/api` routes (OpenCode's PermissionV2Request: action, resources, save, source). */
export const PermissionV2 = z.object({
  id: z.string(),
  sessionID: z.string(),
  action: z.string(),
  resources: z.array(z.string()),
  save: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  source: z.object({ type: z.literal('tool'), messageID: z.string(), callID: z.string() }).optional(),
})
export type PermissionV2 = z.output<typeof PermissionV2>

/** OpenCode's QuestionInfo: one question with its choices. */
export const QuestionInfo = z.object({
  question: z.string(),
  header: z.string(),
  options: z.array(z.object({ label: z.string(), description: z.string() })),
  multiple: z.boolean(),
  /** Whether a person may type an answer of their own: always here (the agent reads any text). */
  custom: z.boolean(),
})
export type QuestionInfo = z.output<typeof QuestionInfo>

/** OpenCode's QuestionRequest (event `question.asked`, GET /question; the same on the `/api` routes). */
export const Question = z.object({
  id: z.string(),
  sessionID: z.string(),
  questions: z.array(QuestionInfo),
  tool: PermissionTool.optional(),
})
export type Question = z.output<typeof Question>

/** OpenCode's answer to a permission request. */
export const PermissionReply = z.enum(['once', 'always', 'reject'])
export type PermissionReply = z.output<typeof PermissionReply>

/** POST /permission/{requestID}/reply and POST /api/session/{sessionID}/permission/{requestID}/reply. */
export const PermissionReplyBody = z.object({ reply: PermissionReply, message: z.string().max(10_000).optional() })
export type PermissionReplyBody = z.output<typeof PermissionReplyBody>

/** POST /session/{sessionID}/permissions/{permissionID}: the older route's body. */
export const PermissionRespondBody = z.object({ response: PermissionReply })
export type PermissionRespondBody = z.output<typeof PermissionRespondBody>

/** POST /question/{requestID}/reply (and its `/api` twin): one list of chosen labels per question. */
export const QuestionReplyBody = z.object({ answers: Answers })
export type QuestionReplyBody = z.output<typeof QuestionReplyBody>

/** Where `/api/…/request` lists are from (OpenCode's LocationInfo): the sandbox base, project `global`. */
export const LocationInfo = z.object({ directory: z.string(), project: z.object({ id: z.string(), directory: z.string() }) })
export type LocationInfo = z.output<typeof LocationInfo>

/**
 * OpenCode 1.18's tagged error bodies on these routes: `{_tag, …, message}`
 * (PermissionNotFoundError, QuestionNotFoundError, SessionNotFoundError,
 * InvalidRequestError). `code` is the service's, when it says more than the tag.
 */
export const TaggedError = z.looseObject({ _tag: z.string(), message: z.string(), code: z.string().optional() })
export type TaggedError = z.output<typeof TaggedError>
