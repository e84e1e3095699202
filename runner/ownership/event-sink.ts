import type { Bus } from '../../bus/mod.ts'
import type { Subjects } from '../../contract/mod.ts'
import type { EventLog } from '../../state/mod.ts'
import type { LiveEvent, StampedEvent } from '../event-draft.ts'
import type { RunnerObserver } from '../observer.ts'

/**
 * Where the runner's session events go: a numbered event to the event log,
 * reported to the observer (metrics, traces) as it goes; a live-only one (a
 * token delta) straight on the bus, outside the log, since a client that was
 * away gets the whole blocks.
 */
export class EventSink {
  readonly #events: EventLog
  readonly #bus: Bus
  readonly #subjects: Subjects
  readonly #observer: RunnerObserver | undefined

  constructor(options: { events: EventLog; bus: Bus; subjects: Subjects; observer?: RunnerObserver | undefined }) {
    this.#events = options.events
    this.#bus = options.bus
    this.#subjects = options.subjects
    this.#observer = options.observer
  }

  /** Stores the event; `publishable` is asked before each try (owned-session.ts). */
  append(event: StampedEvent, publishable: () => boolean): void {
    this.#observer?.event(event)
    this.#events.append(event, publishable)
  }

  /** Sends a live-only event: no sequence, not stored. */
  live(event: LiveEvent): void {
    this.#bus.publish(this.#subjects.live(event.session_id), JSON.stringify(event), undefined, event)
  }
}
