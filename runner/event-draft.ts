import type { ServiceEvent } from '../contract/mod.ts'

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** An event before the runner stamps it with session id, sequence and time. */
export type EventDraft = DistributiveOmit<ServiceEvent, 'session_id' | 'seq' | 'ts'>

/** A session's event as it goes to the event log: the draft stamped with the session, its sequence and the time. */
export type StampedEvent = ServiceEvent & { session_id: string; seq: number }

/** A live-only event (contract LIVE_ONLY_EVENTS) as it goes on the bus: the session and the time, no sequence. */
export type LiveEvent = ServiceEvent & { session_id: string }

export function stampLive(draft: EventDraft, sessionId: string, ts = Date.now()): LiveEvent {
  return { ...draft, session_id: sessionId, ts } as LiveEvent
}

export function stamp(draft: EventDraft, sessionId: string, seq: number, ts = Date.now()): StampedEvent {
  return { ...draft, session_id: sessionId, seq, ts } as StampedEvent
}
