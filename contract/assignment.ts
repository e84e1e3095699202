import { z } from 'zod'
import { SessionId } from './commands.ts'

/**
 * The controller placing a session on a sandbox pod (Kubernetes, per-session
 * credentials): a request on the pod's own subject (`<prefix>.assign.<pod>`),
 * which only that pod's credential may read. It carries the session's NATS
 * credential; the pod connects with it, serves that session only, and answers
 * once it does. The same message for the same session later is a renewal: a
 * fresh credential before the old one expires.
 */
export const Assignment = z.object({
  session_id: SessionId,
  /** The `.creds` text (user JWT + NKey seed) of a `session-runner` user: a secret, kept in memory only. */
  creds: z.string().min(1),
  /** The inbox prefix that credential may receive replies on. */
  inbox_prefix: z.string().min(1),
  /** Seconds since the epoch when the credential expires. */
  expires_at: z.number().int().positive(),
})
export type Assignment = z.output<typeof Assignment>

/** WRONG_SESSION: the pod already serves another session (a pod serves one for life); INTERNAL: it could not connect with the credential. */
export const AssignmentAnswer = z.union([
  z.object({ ok: z.literal(true), runner: z.string() }),
  z.object({ ok: z.literal(false), code: z.enum(['WRONG_SESSION', 'INTERNAL']), message: z.string() }),
])
export type AssignmentAnswer = z.output<typeof AssignmentAnswer>
