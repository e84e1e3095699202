import type { Logger } from 'pino'
import type { Bus, BusMessage, Subscription } from '../bus/mod.ts'
import { isTurnEnd, parseEvent, splitEvents, subjects, type ServiceEvent, type Subjects } from '../contract/mod.ts'
import type { EventLog } from '../state/mod.ts'
import { Follower, type EventListener } from './follower.ts'

export type { EventListener } from './follower.ts'

/** How often a missing event is looked for in the event log, and when it is given up on. */
const GAP_RETRY_MS = 200
const GAP_GIVE_UP_MS = 30_000

export interface AttachOptions {
  /** Replay the stored events after this sequence first (a client resuming where it was). */
  afterSeq?: number | undefined
  /** Called once that replay was delivered. */
  onReplayed?: (() => void) | undefined
}

interface Entry {
  /** The session's events, and its live-only ones (token deltas: no seq, followers pass them on at once). */
  subscriptions: Subscription[]
  followers: Set<Follower>
  /** Turns started through this gateway or seen starting, whose end has not been seen. */
  turnsInFlight: Set<string>
}

/** A turn being started for a session's followers: settled with the runner's answer (TurnStart.accepted or refused). */
export interface TurnStart {
  /** The runner took the turn: its events come after `afterSeq` (when the runner says). */
  accepted(afterSeq: number | undefined): void
  /** The turn was not started. */
  refused(): void
}

/**
 * Fans session events out to the surfaces attached to them. One bus
 * subscription per session, shared by every follower, dropped with the last
 * one; each follower gets every event once and in order (gateway/follower.ts).
 */
export class SessionHub {
  readonly #bus: Bus
  readonly #subjects: Subjects
  readonly #log: Logger
  readonly #events: EventLog | undefined
  readonly #sessions = new Map<string, Entry>()

  constructor(bus: Bus, subjectPrefix: string, log: Logger, events?: EventLog) {
    this.#bus = bus
    this.#subjects = subjects(subjectPrefix)
    this.#log = log
    this.#events = events
  }

  /** Starts delivering the session's events to `listener`; returns the detach function. */
  attach(sessionId: string, listener: EventListener, options: AttachOptions = {}): () => void {
    let entry = this.#sessions.get(sessionId)
    if (!entry) {
      const created: Entry = { followers: new Set(), turnsInFlight: new Set(), subscriptions: [] }
      const onMessage = (msg: BusMessage) => this.#onMessage(sessionId, created, msg)
      created.subscriptions = [this.#bus.subscribe(this.#subjects.events(sessionId), onMessage), this.#bus.subscribe(this.#subjects.live(sessionId), onMessage)]
      entry = created
      this.#sessions.set(sessionId, entry)
    }
    const events = this.#events
    const attached = entry
    const follower = new Follower({
      // What the followers deliver (replayed or live) says whether a turn runs.
      listener: (event, json, replayed) => {
        trackTurn(attached, event)
        listener(event, json, replayed)
      },
      afterSeq: options.afterSeq,
      read: events && ((after) => readStored(events, sessionId, after)),
      retryMs: GAP_RETRY_MS,
      giveUpMs: GAP_GIVE_UP_MS,
      onSkip: (from, to) => this.#log.warn({ session_id: sessionId, from, to }, 'events no longer stored were skipped'),
      onReadError: (err) => this.#log.warn({ session_id: sessionId, err }, 'cannot read the event log'),
      onReplayed: options.onReplayed,
    })
    entry.followers.add(follower)
    return () => {
      follower.close()
      attached.followers.delete(follower)
      if (attached.followers.size === 0 && this.#sessions.get(sessionId) === attached) {
        for (const subscription of attached.subscriptions) subscription.unsubscribe()
        this.#sessions.delete(sessionId)
      }
    }
  }

  /**
   * A turn is about to be sent for the session. Followers that do not know their place yet wait for
   * the runner's answer before they take live events as their start, then fill whatever of the turn
   * they missed from the log; and the session counts as running a turn (sessionsWithTurnInFlight)
   * until its end is seen, even if no event of it ever arrives live.
   */
  startTurn(sessionId: string, turnId: string): TurnStart {
    const entry = this.#sessions.get(sessionId)
    if (!entry) return { accepted: () => {}, refused: () => {} }
    entry.turnsInFlight.add(turnId)
    const held = [...entry.followers].filter((follower) => follower.hold())
    return {
      accepted: (afterSeq) => held.forEach((follower) => follower.release(afterSeq)),
      refused: () => {
        entry.turnsInFlight.delete(turnId)
        held.forEach((follower) => follower.release(undefined))
      },
    }
  }

  /** Has the session's followers look for missed events when they heard nothing for `quietMs`. */
  catchUp(sessionId: string, quietMs: number): void {
    for (const follower of this.#sessions.get(sessionId)?.followers ?? []) follower.catchUp(quietMs)
  }

  /** Sessions followed here with a turn sent through this gateway or seen starting, whose end was not seen. */
  sessionsWithTurnInFlight(): string[] {
    return [...this.#sessions].filter(([, entry]) => entry.turnsInFlight.size > 0).map(([id]) => id)
  }

  /** Resolves once the subscriptions made so far are active on the server. */
  ready(): Promise<void> {
    return this.#bus.flush()
  }

  #onMessage(sessionId: string, entry: Entry, { data, value }: BusMessage): void {
    // An in-process runner's event comes as its object too (dev mode): typed where it was made, no parse needed.
    if (value !== undefined) return this.#offer(entry, value as ServiceEvent, data)
    // Over NATS a message may carry several events, one per line (contract/event-batch.ts).
    for (const json of splitEvents(data)) {
      let event: ServiceEvent
      try {
        event = parseEvent(json)
      } catch (err) {
        this.#log.error({ session_id: sessionId, err }, 'dropped a malformed event from the bus')
        continue
      }
      try {
        this.#offer(entry, event, json)
      } catch (err) {
        // As the bus does for a message's subscriber: the message's other events still go out.
        this.#log.error({ session_id: sessionId, seq: event.seq, err }, 'delivering an event failed')
      }
    }
  }

  #offer(entry: Entry, event: ServiceEvent, json: string): void {
    for (const follower of entry.followers) follower.offer(event, json)
  }
}

/**
 * The session's stored events after `afterSeq` for a follower's replay: each stored text goes to
 * clients as it is, and is parsed (and checked, as a live one is) once, for what needs the object:
 * the turn tracking here, the surfaces' filters, the OpenCode mapping.
 */
async function readStored(events: EventLog, sessionId: string, afterSeq: number): Promise<{ event: ServiceEvent; json: string }[]> {
  return (await events.readStored(sessionId, afterSeq)).map(({ json }) => ({ event: parseEvent(json), json }))
}

function trackTurn(entry: Entry, event: ServiceEvent): void {
  if (event.turn_id === undefined) return
  if (event.event === 'turn_started') entry.turnsInFlight.add(event.turn_id)
  else if (isTurnEnd(event)) entry.turnsInFlight.delete(event.turn_id)
}
