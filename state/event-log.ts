import type { ServiceEvent } from '../contract/events.ts'

/** A stored event as the log gives it back: its sequence and the JSON text it was stored as, unchanged. */
export interface StoredEvent {
  seq: number
  json: string
}

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
  /**
   * The session's stored events with `seq` > `afterSeq`, in order, each as the text it was stored
   * as: replay sends that text on as it is. Events without a sequence are not replayed.
   */
  readStored(sessionId: string, afterSeq: number): Promise<StoredEvent[]>
  /** The same events as objects (the directory's page of events). */
  read(sessionId: string, afterSeq: number): Promise<ServiceEvent[]>
  /** Resolves when every appended event is stored. */
  flush(): Promise<void>
  close(): Promise<void>
}
