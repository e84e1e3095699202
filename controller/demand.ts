import type { Bus, Subscription } from '../bus/mod.ts'
import { DemandRequest as DemandBody, subjects, type DemandAnswer } from '../contract/mod.ts'

export type { DemandAnswer, DemandRefusal } from '../contract/mod.ts'

/**
 * Demand for cold pods: a gateway whose placement found no warm runner asks
 * the controller for a pod for that session, then places again once a runner
 * on the new pod joins the placement queue. Only the leader serves demand.
 */

/** A session asking for a pod of its own. */
export interface Demand {
  session_id: string
}

/** Where demand comes from; the controller serves it while it leads. */
export interface DemandSource {
  /** Starts handing demands to `handler`; returns a function that stops. */
  serve(handler: (demand: Demand) => Promise<DemandAnswer>): () => void
}

/** The request subject; the gateway's side is gateway/cold-start.ts. */
export const demandSubject = (prefix: string) => subjects(prefix).controllerDemand

/** Demand over the bus: requests on `<prefix>.controller.demand`, answered by the leader. */
export class BusDemandSource implements DemandSource {
  readonly #bus: Bus
  readonly #subject: string

  constructor(bus: Bus, prefix: string) {
    this.#bus = bus
    this.#subject = demandSubject(prefix)
  }

  serve(handler: (demand: Demand) => Promise<DemandAnswer>): () => void {
    const subscription: Subscription = this.#bus.subscribe(
      this.#subject,
      (msg) => {
        let demand: Demand
        try {
          demand = DemandBody.parse(JSON.parse(msg.data))
        } catch (err) {
          msg.respond(JSON.stringify({ ok: false, code: 'INTERNAL', message: `bad demand: ${(err as Error).message}` } satisfies DemandAnswer))
          return
        }
        handler(demand).then(
          (answer) => msg.respond(JSON.stringify(answer)),
          (err: unknown) =>
            msg.respond(JSON.stringify({ ok: false, code: 'INTERNAL', message: String((err as Error)?.message ?? err) } satisfies DemandAnswer)),
        )
      },
      // One group: should two replicas both believe they lead for a moment, one answers.
      { queue: 'agent-runtime-controller' },
    )
    return () => subscription.unsubscribe()
  }
}

/** Demand handed in directly (tests, benchmark). */
export class MemoryDemandSource implements DemandSource {
  #handler: ((demand: Demand) => Promise<DemandAnswer>) | undefined

  serve(handler: (demand: Demand) => Promise<DemandAnswer>): () => void {
    this.#handler = handler
    return () => {
      if (this.#handler === handler) this.#handler = undefined
    }
  }

  /** Asks for a pod as a gateway would; NOT_LEADER when no controller serves. */
  async request(sessionId: string): Promise<DemandAnswer> {
    if (this.#handler === undefined) return { ok: false, code: 'NOT_LEADER', message: 'no controller leads now' }
    return this.#handler({ session_id: sessionId })
  }
}
