import { z } from 'zod'
import { NamedError } from './session.ts'

/**
 * Messages and parts as OpenCode serves them (GET /session/{id}/message, the
 * blocking prompt's answer, `message.updated` / `message.part.updated`).
 */
export const Tokens = z.object({
  total: z.number().optional(),
  input: z.number(),
  output: z.number(),
  reasoning: z.number(),
  cache: z.object({ read: z.number(), write: z.number() }),
})
export type Tokens = z.output<typeof Tokens>

export const ModelRef = z.object({ providerID: z.string(), modelID: z.string() })
export type ModelRef = z.output<typeof ModelRef>

export const UserMessage = z.object({
  id: z.string(),
  sessionID: z.string(),
  role: z.literal('user'),
  time: z.object({ created: z.number() }),
  agent: z.string(),
  model: ModelRef,
  system: z.string().optional(),
})
export type UserMessage = z.output<typeof UserMessage>

export const AssistantMessage = z.object({
  id: z.string(),
  sessionID: z.string(),
  role: z.literal('assistant'),
  time: z.object({ created: z.number(), completed: z.number().optional() }),
  error: NamedError.optional(),
  parentID: z.string(),
  modelID: z.string(),
  providerID: z.string(),
  mode: z.string(),
  agent: z.string(),
  path: z.object({ cwd: z.string(), root: z.string() }),
  cost: z.number(),
  tokens: Tokens,
  finish: z.string().optional(),
})
export type AssistantMessage = z.output<typeof AssistantMessage>

export const Message = z.discriminatedUnion('role', [UserMessage, AssistantMessage])
export type Message = z.output<typeof Message>

const PartBase = { id: z.string(), sessionID: z.string(), messageID: z.string() }
const ToolInput = z.record(z.string(), z.unknown())

export const TextPart = z.object({
  ...PartBase,
  type: z.literal('text'),
  text: z.string(),
  time: z.object({ start: z.number(), end: z.number().optional() }).optional(),
})
export type TextPart = z.output<typeof TextPart>

export const ReasoningPart = z.object({
  ...PartBase,
  type: z.literal('reasoning'),
  text: z.string(),
  time: z.object({ start: z.number(), end: z.number().optional() }),
})
export type ReasoningPart = z.output<typeof ReasoningPart>

/** A tool call's state: `running` → `completed` or `error` (spec §3 leaves the transitions open). */
export const ToolState = z.discriminatedUnion('status', [
  z.object({ status: z.literal('running'), input: ToolInput, title: z.string().optional(), time: z.object({ start: z.number() }) }),
  z.object({
    status: z.literal('completed'),
    input: ToolInput,
    output: z.string(),
    title: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    time: z.object({ start: z.number(), end: z.number() }),
  }),
  z.object({
    status: z.literal('error'),
    input: ToolInput,
    error: z.string(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    time: z.object({ start: z.number(), end: z.number() }),
  }),
])
export type ToolState = z.output<typeof ToolState>

export const ToolPart = z.object({
  ...PartBase,
  type: z.literal('tool'),
  /** The agent CLI's tool_use id. */
  callID: z.string(),
  /** The tool's name as the agent CLI gave it (e.g. `Bash`). */
  tool: z.string(),
  state: ToolState,
})
export type ToolPart = z.output<typeof ToolPart>

export const StepStartPart = z.object({ ...PartBase, type: z.literal('step-start') })
export type StepStartPart = z.output<typeof StepStartPart>

export const StepFinishPart = z.object({
  ...PartBase,
  type: z.literal('step-finish'),
  reason: z.string(),
  cost: z.number(),
  tokens: Tokens,
})
export type StepFinishPart = z.output<typeof StepFinishPart>

export const Part = z.discriminatedUnion('type', [TextPart, ReasoningPart, ToolPart, StepStartPart, StepFinishPart])
export type Part = z.output<typeof Part>

/** One message with its parts, as GET /session/{id}/message lists them. */
export const MessageWithParts = z.object({ info: Message, parts: z.array(Part) })
export type MessageWithParts = z.output<typeof MessageWithParts>
