import { z } from 'zod'
import { ErrorBody } from './errors.ts'
import { Stats } from './stats.ts'
import { Answers, PermissionDecision, PermissionRequest, QuestionRequest, ResolutionSource } from './steering.ts'

/**
 * The one event registry. A runner publishes these on the session's events
 * subject; the gateway relays them. Native WebSocket clients receive them as
 * they are (spec §2.4: `event`, `data`, `session_id`, `stats`, plus the
 * fields below).
 */

/** request_id as the client sent it (spec: integer; strings are echoed too). */
export const RequestId = z.union([z.number(), z.string().max(200)])
export type RequestId = z.output<typeof RequestId>

const Base = {
  /** Set on every event about a session (all but `version` and request errors). */
  session_id: z.string().optional(),
  /** Per-session sequence, 1, 2, 3 … in publish order; set on every event a runner publishes. */
  seq: z.number().int().positive().optional(),
  /** Epoch milliseconds when the runner produced the event. */
  ts: z.number().optional(),
  /** The turn (one execute) the event belongs to. */
  turn_id: z.string().optional(),
  /** Echo of the request this event answers. */
  request_id: RequestId.optional(),
  /** The event was cut to fit the bus's message size (its text ends with a note saying so). */
  truncated: z.boolean().optional(),
}

function define<const T extends string, S extends z.ZodRawShape>(event: T, shape: S) {
  return z.object({ event: z.literal(event), ...Base, ...shape })
}

/** The WAF rule behind a WAF_BLOCKED error (waf/README.md lists the rules). */
const WafBlock = z.object({
  rule_id: z.string(),
  category: z.string(),
  level: z.enum(['block', 'warn']),
  /** Why the rule exists; also shown to the agent. */
  description: z.string(),
  /** The matched text, secrets masked, at most 160 characters. */
  excerpt: z.string(),
  /** The view that matched: `prompt`, `command`, `command_text`, `read_path`, `write_path`, `url`, `content`. */
  target: z.string(),
  /** For a tool call: the input field, e.g. `command` or `file_path`. */
  field: z.string().optional(),
})

export const Events = {
  /** The runner took a prompt off the queue and handed it to the CLI. */
  turn_started: define('turn_started', { data: z.string(), instructions: z.string().optional() }),
  thinking: define('thinking', { data: z.string(), message_id: z.string().optional() }),
  tool_use: define('tool_use', {
    /** The tool's name. */
    data: z.string(),
    tool: z.object({ id: z.string(), name: z.string(), input: z.unknown() }),
    message_id: z.string().optional(),
  }),
  tool_result: define('tool_result', {
    /** The tool's output as text. */
    data: z.string(),
    tool: z.object({ id: z.string(), name: z.string().optional() }),
    is_error: z.boolean(),
  }),
  answer: define('answer', { data: z.string(), message_id: z.string().optional() }),
  /**
   * A piece of an answer as the model writes it (the CLI's `--include-partial-messages`):
   * `data` is the text added. The block's `answer` follows with the whole text. Live only:
   * no `seq`, never stored, never replayed (LIVE_ONLY_EVENTS).
   */
  answer_delta: define('answer_delta', { data: z.string(), message_id: z.string().optional() }),
  /** A piece of a thinking block, like answer_delta; the block's `thinking` follows. Live only. */
  thinking_delta: define('thinking_delta', { data: z.string(), message_id: z.string().optional() }),
  completed: define('completed', {
    /** The session's stats summed over all turns so far. */
    stats: Stats,
    /** This turn's own counters. */
    turn_stats: Stats,
    /** The CLI's final result text for the turn. */
    data: z.string().optional(),
  }),
  /**
   * A turn's summary, published right before its `completed`: the session's counters
   * (`stats`), the turn's own (`turn_stats`), the distinct tools it called in first-use
   * order, and whether it failed.
   */
  session_stats: define('session_stats', {
    stats: Stats,
    turn_stats: Stats,
    tools_used: z.array(z.string()),
    is_error: z.boolean(),
  }),
  stopped: define('stopped', { data: z.string().optional() }),
  stats: define('stats', { stats: Stats }),
  version: define('version', { data: z.string(), engine: z.string() }),
  error: define('error', {
    data: z.string(),
    error: ErrorBody,
    /** WAF_BLOCKED: the rule that blocked the prompt or the tool call. */
    waf: WafBlock.optional(),
    /** Set when one tool call was denied; the turn goes on (see isTurnEnd). */
    tool: z.object({ id: z.string().optional(), name: z.string(), input: z.unknown().optional() }).optional(),
  }),
  /** A tool call waits for a person's yes (contract/steering.ts); `data` is its title. */
  permission_request: define('permission_request', { data: z.string(), permission: PermissionRequest }),
  /** The agent asks the person; `data` is the first question's text. */
  question: define('question', { data: z.string(), question: QuestionRequest }),
  /** A permission request was settled; `by` names who answered when a person did. */
  permission_resolved: define('permission_resolved', {
    data: z.string(),
    permission_id: z.string(),
    decision: PermissionDecision,
    source: ResolutionSource,
    by: z.string().optional(),
    /** source `rule`: the rule that decided (`approval_allow`, `approval_deny` or an earlier "allow always"). */
    rule: z.string().optional(),
    /** source `rule`: the call the rule decided, which no `permission_request` announced. */
    tool: z.object({ id: z.string().optional(), name: z.string(), input: z.unknown() }).optional(),
    /** How long the request waited, from its `permission_request` (absent for a rule). */
    waited_ms: z.number().int().nonnegative().optional(),
  }),
  /** A question was answered or rejected (`answers` absent). */
  question_resolved: define('question_resolved', {
    data: z.string(),
    question_id: z.string(),
    answers: Answers.optional(),
    source: ResolutionSource,
    by: z.string().optional(),
    /** How long the question waited, from its `question` event. */
    waited_ms: z.number().int().nonnegative().optional(),
  }),
  /**
   * Keep-alive pulse (spec §7) the gateway sends a WebSocket client while a
   * tool_use has no tool_result yet. Not part of the session's sequence: no
   * `seq`, never on the bus, never replayed.
   */
  task_boundary: define('task_boundary', {
    /** Always `tool running`. */
    data: z.string(),
    tool: z.object({ id: z.string(), name: z.string() }),
    /** Time since the tool_use, by the gateway's clock. */
    elapsed_ms: z.number().int().nonnegative(),
  }),
}

export type EventName = keyof typeof Events

/**
 * Events a runner sends live and never stores: they carry no `seq`, go on the session's live
 * subject (contract/subjects.ts) rather than its event log, and a client that reconnects does
 * not get them again. The full text of each block follows in a stored event.
 */
export const LIVE_ONLY_EVENTS: ReadonlySet<EventName> = new Set<EventName>(['answer_delta', 'thinking_delta'])

/** Whether an event is sent live only, never stored (LIVE_ONLY_EVENTS). */
export function isLiveOnly(event: { event: EventName }): boolean {
  return LIVE_ONLY_EVENTS.has(event.event)
}
export type EventOf<N extends EventName> = z.output<(typeof Events)[N]>

/** A permission request or question, or its resolution (contract/steering.ts). */
export type SteeringEvent = EventOf<'permission_request' | 'question' | 'permission_resolved' | 'question_resolved'>

/** The id of the request a steering event opens or settles (`per_…`, `que_…`). */
export function steeringIdOf(event: SteeringEvent): string {
  switch (event.event) {
    case 'permission_request':
      return event.permission.id
    case 'question':
      return event.question.id
    case 'permission_resolved':
      return event.permission_id
    case 'question_resolved':
      return event.question_id
  }
}
export type ServiceEvent = { [N in EventName]: EventOf<N> }[EventName]

/**
 * Whether an event ends its turn: `completed`, `stopped`, or an `error` that is
 * not about one tool call (a WAF-denied tool call is reported as an `error`
 * with `tool`, and the agent goes on).
 */
export function isTurnEnd(event: ServiceEvent): boolean {
  return event.event === 'completed' || event.event === 'stopped' || (event.event === 'error' && event.tool === undefined)
}

export const ServiceEventSchema = z.discriminatedUnion(
  'event',
  Object.values(Events) as unknown as [(typeof Events)[EventName], ...(typeof Events)[EventName][]],
)

/** Parses one event off the wire; throws a ZodError naming the bad field. */
export function parseEvent(json: string): ServiceEvent {
  const raw: unknown = JSON.parse(json)
  return isPlainTextEvent(raw) ? raw : (ServiceEventSchema.parse(raw) as ServiceEvent)
}

/** The events that are most of a turn, a text and the Base fields: checked by hand (see isPlainTextEvent). */
const TEXT_EVENTS = new Set<unknown>(['answer', 'thinking', 'answer_delta', 'thinking_delta'])
const TEXT_EVENT_KEYS = new Set(['event', 'data', 'message_id', ...Object.keys(Base)])

/**
 * Whether `raw` is an answer, thinking or delta event exactly as the schema takes it, no key
 * more (the schema would strip it): then it is the parsed event as it is, without the schema's
 * walk and copy, which cost about a tenth of the gateway's CPU per relayed event. Anything
 * else, valid or not, goes through the schema.
 */
function isPlainTextEvent(raw: unknown): raw is ServiceEvent {
  if (typeof raw !== 'object' || raw === null) return false
  const event = raw as Record<string, unknown>
  if (!TEXT_EVENTS.has(event.event) || typeof event.data !== 'string') return false
  for (const key in event) if (!TEXT_EVENT_KEYS.has(key)) return false
  const { seq, ts, request_id: requestId } = event
  return (
    optional(event.message_id, 'string') &&
    optional(event.session_id, 'string') &&
    optional(event.turn_id, 'string') &&
    optional(ts, 'number') &&
    optional(event.truncated, 'boolean') &&
    (seq === undefined || (Number.isSafeInteger(seq) && (seq as number) > 0)) &&
    (requestId === undefined || typeof requestId === 'number' || (typeof requestId === 'string' && requestId.length <= 200))
  )
}

function optional(value: unknown, type: 'string' | 'number' | 'boolean'): boolean {
  return value === undefined || typeof value === type
}
