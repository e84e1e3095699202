import { z } from 'zod'

/**
 * An OpenCode Session (the fields OpenCode 1.18 clients read). POST /session
 * answers it flat and, for clients of the spec's shape, again under `info`.
 */
export const SessionInfo = z.object({
  id: z.string(),
  slug: z.string(),
  projectID: z.string(),
  directory: z.string(),
  title: z.string(),
  version: z.string(),
  time: z.object({ created: z.number(), updated: z.number() }),
})
export type SessionInfo = z.output<typeof SessionInfo>

/** `session.status` values this service produces (OpenCode also has `retry`). */
export const SessionStatus = z.discriminatedUnion('type', [z.object({ type: z.literal('idle') }), z.object({ type: z.literal('busy') })])
export type SessionStatus = z.output<typeof SessionStatus>

/** OpenCode's named error body: `{name, data: {message}}`. */
export const NamedError = z.object({
  name: z.string(),
  data: z.looseObject({ message: z.string() }),
})
export type NamedError = z.output<typeof NamedError>
