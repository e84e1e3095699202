import type { ServiceEvent } from '../contract/mod.ts'

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** An event before the runner stamps it with session id, sequence and time. */
export type EventDraft = DistributiveOmit<ServiceEvent, 'session_id' | 'seq' | 'ts'>

/** A session's event as it goes to the event log: the draft stamped with the session, its sequence and the time. */
export type StampedEvent = ServiceEvent & { session_id: string; seq: number }

export function stamp(draft: EventDraft, sessionId: string, seq: number, ts = Date.now()): StampedEvent {
  return { ...draft, session_id: sessionId, seq, ts } as StampedEvent
}
