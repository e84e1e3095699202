import { z } from 'zod'
import { SessionId } from './commands.ts'

/**
 * Demand for cold pods (Kubernetes): a gateway whose placement found no warm
 * runner asks the leading controller for a pod for the session, then places
 * again once a runner on the new pod joins the placement group. With
 * per-session credentials (controller.session_credentials) no pod is in the
 * placement group: the controller places the session itself and answers
 * `assigned: true` once the pod serves it on its own subject.
 */
export const DemandRequest = z.object({ session_id: SessionId })
export type DemandRequest = z.output<typeof DemandRequest>

/** POOL_EXHAUSTED: controller.max_pods reached; NOT_LEADER: ask again (the leader answers); INTERNAL: the pod could not be made. */
export const DemandRefusal = z.enum(['POOL_EXHAUSTED', 'NOT_LEADER', 'INTERNAL'])
export type DemandRefusal = z.output<typeof DemandRefusal>

export const DemandAnswer = z.union([
  z.object({
    ok: z.literal(true),
    pod: z.string(),
    created: z.boolean(),
    /** The pod's runner serves the session now (or already did): send its commands to `<prefix>.runner.<pod>`, not to placement. */
    assigned: z.boolean().optional(),
  }),
  z.object({ ok: z.literal(false), code: DemandRefusal, message: z.string() }),
])
export type DemandAnswer = z.output<typeof DemandAnswer>
