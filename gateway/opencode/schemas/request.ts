import { z } from 'zod'
import { SessionId } from '../../../contract/mod.ts'

/**
 * Request bodies of the REST layer. Each accepts both the spec's shape and
 * OpenCode's; fields neither uses are let through and ignored, as OpenCode
 * clients send more than this service acts on (permission, tools, variant…).
 */

/** POST /session: spec §4.2 (`session_id`, `work_dir`) and OpenCode's (`title`, …); may be empty. */
export const CreateSessionBody = z.looseObject({
  session_id: SessionId.optional(),
  work_dir: z.string().optional(),
  title: z.string().max(1000).optional(),
})
export type CreateSessionBody = z.output<typeof CreateSessionBody>

/** A part of an OpenCode prompt; only `text` parts carry prompt text here. */
export const PromptPartInput = z.looseObject({ type: z.string(), text: z.string().optional() })

/** POST /session/{id}/message and /prompt_async: spec §2.5 and OpenCode's prompt body in one. */
export const PromptBody = z.looseObject({
  // spec §2.5
  prompt: z.string().optional(),
  system_prompt: z.string().optional(),
  // OpenCode
  parts: z.array(PromptPartInput).optional(),
  system: z.string().optional(),
  messageID: z.string().optional(),
  noReply: z.boolean().optional(),
  // both
  agent: z.string().optional(),
  model: z.union([z.string(), z.looseObject({ providerID: z.string(), modelID: z.string() })]).optional(),
})
export type PromptBody = z.output<typeof PromptBody>
