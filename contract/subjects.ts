/**
 * Bus subjects. Session ids are client-chosen and may hold characters NATS
 * treats specially (`.`, `*`, `>`, spaces), so each id becomes one safe token.
 */
const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,200}$/

/** A subject token for a session id: the id itself when safe, else `~` + base64url. */
export function sessionToken(sessionId: string): string {
  if (SAFE_TOKEN.test(sessionId)) return sessionId
  return '~' + Buffer.from(sessionId, 'utf8').toString('base64url')
}

/** The subjects of one deployment; `prefix` keeps deployments on one NATS apart. */
export function subjects(prefix: string) {
  return {
    /** Commands for the sessions one runner owns, and its liveness ping. */
    runner: (runnerId: string) => `${prefix}.runner.${runnerId}`,
    /** Commands for sessions no live runner owns; runners with room answer (one queue group). */
    place: `${prefix}.place`,
    /** Events of one session, published by its runner. */
    events: (sessionId: string) => `${prefix}.evt.${sessionToken(sessionId)}`,
    /** Every session's events (the event stream's subjects). */
    allEvents: `${prefix}.evt.*`,
    /** Live-only events of one session (token deltas): outside the event stream, never stored. */
    live: (sessionId: string) => `${prefix}.live.${sessionToken(sessionId)}`,
    /** Every session's live-only events. */
    allLive: `${prefix}.live.*`,
    /**
     * The controller handing one sandbox pod its session and that session's credential
     * (Kubernetes, per-session credentials): only that pod may read it.
     */
    assign: (pod: string) => `${prefix}.assign.${pod}`,
    /** A gateway asking the leading controller for a cold pod (Kubernetes). */
    controllerDemand: `${prefix}.controller.demand`,
    /** Requests that concern no session (engine version, is any runner there). */
    control: `${prefix}.ctl`,
  } as const
}

export type Subjects = ReturnType<typeof subjects>
