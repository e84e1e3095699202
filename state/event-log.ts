import type { ServiceEvent } from '../contract/events.ts'

/**
 * Every event a session publishes, in order, kept for replay: a client that
 * reconnects with the last sequence it saw gets what it missed. Dev mode keeps
 * a bounded list per session in memory; production a JetStream stream.
 */
export interface EventLog {
  /**
   * Stores the event (which carries `session_id` and `seq`) and delivers it live on the bus.
   * `publishable` is asked before each try (a retry may come much later): once it says no, the
   * publisher has lost the session (fenced, taken over), and the event is dropped, never stored.
   */
  append(event: ServiceEvent & { session_id: string; seq: number }, publishable?: () => boolean): void
  /** The highest sequence stored for the session (0 when none). */
  lastSeq(sessionId: string): Promise<number>
  /** The session's stored events with `seq` > `afterSeq`, in order. */
  read(sessionId: string, afterSeq: number): Promise<ServiceEvent[]>
  /** Resolves when every appended event is stored. */
  flush(): Promise<void>
  close(): Promise<void>
}
