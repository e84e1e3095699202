import { z } from 'zod'
import { ErrorBody, ServiceError } from './errors.ts'
import { RequestId } from './events.ts'
import { Stats } from './stats.ts'
import { PendingRequests, SteeringReply } from './steering.ts'

/**
 * Commands the gateway sends a runner (request/reply on the session's command
 * subject, or the control subject for `version`), and the runner's replies.
 */

/**
 * Session ids: any text of 1 to 256 UTF-16 code units that is well-formed
 * (no lone surrogate: as UTF-8, in paths and subjects, it would become U+FFFD
 * and two sessions would share one sandbox, conversation and event stream).
 */
export const SessionId = z
  .string()
  .min(1)
  .max(256)
  .refine(
    (id) => id.isWellFormed(),
    'the session id must be well-formed UTF-16 text (it holds a lone surrogate, such as \\ud800 not followed by a low surrogate)',
  )

/**
 * When the gateway stops waiting for the reply (epoch ms, the gateway's clock). A runner that
 * gets the command later (it was frozen, its queue was long) does not carry it out: the client
 * was told it failed, and may send it again. Optional, so older gateways still work.
 */
const Deadline = z.number().int().positive().optional()

/**
 * A configured engine's name (`engines[].name`, `engine.default`): which agent
 * CLI runs a session. A session keeps the engine of its first turn.
 */
export const EngineName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'an engine name is 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit')

/** How one configured engine answered `--version`: its version, or why it has none (its CLI is missing or fails). */
export const EngineStatus = z.union([
  z.object({ name: z.string(), type: z.string(), version: z.string() }),
  z.object({ name: z.string(), type: z.string(), error: z.string() }),
])
export type EngineStatus = z.output<typeof EngineStatus>

export const Commands = {
  execute: z.object({
    type: z.literal('execute'),
    session_id: SessionId,
    deadline: Deadline,
    /** Chosen by the gateway; every event of this turn carries it. */
    turn_id: z.string().min(1),
    prompt: z.string().min(1),
    instructions: z.string().optional(),
    work_dir: z.string().optional(),
    /** The engine a new session runs (none: `engine.default`); a later turn may only name the session's own. */
    engine: EngineName.optional(),
    request_id: RequestId.optional(),
  }),
  stop: z.object({
    type: z.literal('stop'),
    session_id: SessionId,
    deadline: Deadline,
    reason: z.string().optional(),
    request_id: RequestId.optional(),
  }),
  /** Ends the session: stops its work and frees its process; the conversation stays resumable. */
  close: z.object({ type: z.literal('close'), session_id: SessionId, deadline: Deadline }),
  stats: z.object({ type: z.literal('stats'), session_id: SessionId, deadline: Deadline }),
  /** The version of one engine's CLI: the one named, else the session's, else the default one. */
  version: z.object({ type: z.literal('version'), engine: EngineName.optional(), session_id: SessionId.optional() }),
  /** Is this runner alive (sent to its own subject). */
  ping: z.object({ type: z.literal('ping') }),
  /** A person's answer to a permission request or question of the session; `by` names who answered. */
  reply: z.object({ type: z.literal('reply'), session_id: SessionId, deadline: Deadline, reply: SteeringReply, by: z.string().max(200).optional() }),
  /** The session's permission requests and questions still waiting for a person. */
  pending: z.object({ type: z.literal('pending'), session_id: SessionId, deadline: Deadline }),
  /** The session's owner seems dead: a live runner takes the session over and ends its lost turn. */
  recover: z.object({ type: z.literal('recover'), session_id: SessionId, deadline: Deadline }),
}

export const Command = z.discriminatedUnion('type', [
  Commands.execute,
  Commands.stop,
  Commands.close,
  Commands.stats,
  Commands.version,
  Commands.ping,
  Commands.recover,
  Commands.reply,
  Commands.pending,
])
export type Command = z.output<typeof Command>
export type CommandOf<T extends Command['type']> = Extract<Command, { type: T }>

/** What each command's successful reply holds. */
export const Replies = {
  execute: z.object({
    turn_id: z.string(),
    /** Prompts ahead of this one. */
    queued: z.number().int(),
    /** The session's last event sequence when the prompt was taken: every event of the turn comes after it (absent from runners older than it). */
    after_seq: z.number().int().min(0).optional(),
  }),
  stop: z.object({ stopped: z.boolean() }),
  close: z.object({ closed: z.boolean() }),
  stats: z.object({ stats: Stats, busy: z.boolean() }),
  /**
   * `engine` is the engine's name, `engine_type` its adapter (claude, acp, codex, opencode);
   * asked for no engine, `engines` tells how every configured one answered (readiness needs all).
   */
  version: z.object({ version: z.string(), engine: z.string(), engine_type: z.string().optional(), engines: z.array(EngineStatus).optional() }),
  ping: z.object({ runner: z.string() }),
  recover: z.object({ recovered: z.boolean() }),
  reply: z.object({ resolved: z.literal(true) }),
  pending: PendingRequests,
} satisfies Record<Command['type'], z.ZodObject>
export type ReplyOf<T extends Command['type']> = z.output<(typeof Replies)[T]>

const ErrorReply = z.object({ ok: z.literal(false), error: ErrorBody })

export function okReply<T extends Command['type']>(_type: T, body: ReplyOf<T>): string {
  return JSON.stringify({ ok: true, ...body })
}

export function errorReply(error: ErrorBody): string {
  return JSON.stringify({ ok: false, error })
}

/** The reply header naming the runner that answered (and owns the session). */
export const RUNNER_HEADER = 'runner-id'

/** Decodes a reply; a failed command becomes a thrown ServiceError with its code. */
export function decodeReply<T extends Command['type']>(type: T, json: string): ReplyOf<T> {
  const raw = JSON.parse(json) as { ok?: unknown }
  if (raw.ok === false) {
    const { error } = ErrorReply.parse(raw)
    throw new ServiceError(error.code, error.message)
  }
  return Replies[type].parse(raw) as ReplyOf<T>
}
