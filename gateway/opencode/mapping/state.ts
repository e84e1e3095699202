import type { IdSource } from '../ids.ts'
import type { AssistantMessage, MessageWithParts, ModelRef, ReasoningPart, TextPart, ToolPart } from '../schemas/message.ts'
import type { Permission, Question } from '../schemas/steering.ts'

/** What a REST prompt asked for, known before its turn starts. */
export interface TurnPlan {
  turnId: string
  userMessageID: string
  assistantMessageID: string
  agent: string
  model: ModelRef
  system?: string
}

/** A turn that is expected (planned) or running. */
export interface TurnState {
  plan: TurnPlan
  started: boolean
  /** Open tool parts by the CLI's tool_use id. */
  tools: Map<string, ToolPart>
  /** The text and reasoning parts being streamed (token deltas), until their whole block arrives. */
  streams: Map<'text' | 'reasoning', OpenStream>
}

/** A part whose text is arriving delta by delta: the part with the text so far, and the API message it is of. */
export interface OpenStream {
  part: TextPart | ReasoningPart
  messageId: string | undefined
}

/** A turn's state before it starts. */
export function newTurn(plan: TurnPlan): TurnState {
  return { plan, started: false, tools: new Map(), streams: new Map() }
}

/**
 * One session's conversation as OpenCode sees it. The mapper owns it: it
 * replaces a message's info and its parts rather than changing them, so
 * every object it has put in an event stays as it was when emitted. Only
 * the arrays grow in place: copying a message's parts per event would make
 * a turn of n events cost n² (issue 16).
 */
export interface SessionView {
  sessionID: string
  directory: string
  messages: MessageWithParts[]
  status: 'idle' | 'busy'
  turns: Map<string, TurnState>
  /** The messages by id, with where each part sits: an event finds its place without a scan. */
  index: Map<string, MessageSlot>
  /** Permission requests and questions asked and not yet settled, oldest first. */
  steering: SteeringView
}

/** A request waiting for a person, in OpenCode's shape, with the turn that asked it. */
export interface Waiting<T> {
  info: T
  turnId: string | undefined
}

/** A session's open requests by id (the service's `per_…` and `que_…` ids). */
export interface SteeringView {
  permissions: Map<string, Waiting<Permission>>
  questions: Map<string, Waiting<Question>>
}

/** A message of the view and the position of each of its parts, by part id. */
export interface MessageSlot {
  entry: MessageWithParts
  parts: Map<string, number>
}

/** Everything the mapper takes from outside: ids, a clock for events without `ts`, defaults. */
export interface MapContext {
  id: IdSource
  now: () => number
  defaults: { agent: string; model: ModelRef }
}

/** How a turn ended, for a client waiting on it. */
export interface TurnEnd {
  turnId: string
  end: 'completed' | 'stopped' | 'error'
  /** The assistant message with its parts; absent when the turn never started. */
  message?: { info: AssistantMessage; parts: MessageWithParts['parts'] }
  /** Set when end is `error`. */
  error?: { code: string; message: string }
}

export function newSessionView(sessionID: string, directory: string): SessionView {
  return { sessionID, directory, messages: [], status: 'idle', turns: new Map(), index: new Map(), steering: { permissions: new Map(), questions: new Map() } }
}

/** A plan with the defaults filled in and fresh message ids unless given. */
export function makePlan(
  ctx: MapContext,
  turnId: string,
  request: { agent?: string | undefined; model?: ModelRef | undefined; system?: string | undefined; messageID?: string | undefined } = {},
): TurnPlan {
  const plan: TurnPlan = {
    turnId,
    userMessageID: request.messageID ?? ctx.id('msg'),
    assistantMessageID: ctx.id('msg'),
    agent: request.agent ?? ctx.defaults.agent,
    model: request.model ?? ctx.defaults.model,
  }
  if (request.system !== undefined) plan.system = request.system
  return plan
}
