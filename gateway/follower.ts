import type { ServiceEvent } from '../contract/mod.ts'

/** Receives a session's events: parsed, the JSON text, and whether it was replayed from the log for a resume (history) rather than live. */
export type EventListener = (event: ServiceEvent, json: string, replayed?: boolean) => void

export interface FollowerOptions {
  listener: EventListener
  /** Deliver only events after this sequence (a resuming client); none means from the next live one. */
  afterSeq?: number | undefined
  /** The session's stored events after a sequence, each with the text it was stored as (sent on unchanged); none means nothing can be filled. */
  read?: ((afterSeq: number) => Promise<{ event: ServiceEvent; json: string }[]>) | undefined
  /** Retry period while waiting for a missing event. */
  retryMs: number
  /** After this long a missing event is given up on (it was trimmed, or never stored). */
  giveUpMs: number
  onSkip(from: number, to: number): void
  onReadError(err: unknown): void
  /** With afterSeq: called once the stored events after it were delivered (or the log could not be read). */
  onReplayed?: (() => void) | undefined
}

/**
 * One listener's view of a session: every event exactly once, in sequence
 * order. Live events arrive from the bus; whatever it missed (a resume after
 * a sequence, events published while this gateway was away, a retried publish
 * that landed late) is read from the event log before later events go out.
 */
export class Follower {
  readonly #options: FollowerOptions
  /** The last sequence delivered. */
  #cursor: number | undefined
  #pending = new Map<number, { event: ServiceEvent; json: string; replayed?: boolean }>()
  #filling = false
  #gapSince: number | undefined
  #timer: NodeJS.Timeout | undefined
  #closed = false
  /** When the last event was delivered (epoch ms). */
  #lastDelivery = Date.now()
  /** Turns being started that this follower waits to learn the start of (see hold). */
  #holds = 0
  /** The lowest sequence those turns' events are known to come after. */
  #floor: number | undefined

  constructor(options: FollowerOptions) {
    this.#options = options
    this.#cursor = options.afterSeq
    if (options.afterSeq !== undefined) void this.#fill(true)
  }

  /** A live event off the bus. */
  offer(event: ServiceEvent, json: string): void {
    const seq = event.seq
    if (seq === undefined) return this.#options.listener(event, json)
    if (this.#cursor === undefined) {
      if (this.#holds > 0) {
        this.#pending.set(seq, { event, json }) // kept until release says where the turn starts
        return
      }
      this.#cursor = seq - 1 // a new follower starts at the first live event
    }
    if (seq <= this.#cursor) return
    if (seq === this.#cursor + 1 && this.#pending.size === 0 && !this.#filling && !this.#closed) {
      // The next one, nothing waiting: delivered at once, without a map entry per event.
      this.#gapSince = undefined
      return this.#deliverNext({ event, json })
    }
    this.#pending.set(seq, { event, json })
    this.#drain()
  }

  /**
   * A turn is being started for this follower (it attached for it): until release, live events are
   * kept rather than taken as the start, since the turn's first ones may be missed live. False when
   * the follower knows its place already and needs no hold.
   */
  hold(): boolean {
    if (this.#cursor !== undefined) return false
    this.#holds++
    return true
  }

  /**
   * The turn was started (its events come after `afterSeq`) or refused (undefined). Once nothing is
   * held, the follower starts after the lowest sequence learned, so a missed event is filled from the
   * log; learning none, at the first event kept.
   */
  release(afterSeq: number | undefined): void {
    if (afterSeq !== undefined) this.#floor = Math.min(afterSeq, this.#floor ?? afterSeq)
    if (--this.#holds > 0 || this.#cursor !== undefined) return
    const first = this.#pending.size > 0 ? Math.min(...this.#pending.keys()) : undefined
    this.#cursor = this.#floor ?? (first === undefined ? undefined : first - 1)
    this.#floor = undefined
    if (this.#cursor === undefined) return
    for (const seq of this.#pending.keys()) if (seq <= this.#cursor) this.#pending.delete(seq)
    this.#drain()
  }

  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
  }

  /**
   * Looks in the log for events after the cursor when nothing arrived for `quietMs`: events
   * published while this gateway was cut off are only noticed live once a later one comes, and
   * a turn's last event has none after it.
   */
  catchUp(quietMs: number): void {
    if (this.#closed || this.#filling || this.#timer !== undefined || this.#cursor === undefined) return
    if (Date.now() - this.#lastDelivery < quietMs) return
    this.#lastDelivery = Date.now()
    void this.#fill(false)
  }

  /** Hands the listener the event right after the cursor, which moves onto it. */
  #deliverNext(next: { event: ServiceEvent; json: string; replayed?: boolean | undefined }): void {
    this.#cursor = this.#cursor! + 1
    this.#lastDelivery = Date.now()
    this.#options.listener(next.event, next.json, next.replayed)
  }

  #drain(): void {
    if (this.#filling || this.#closed) return
    let next = this.#pending.get(this.#cursor! + 1)
    while (next) {
      this.#pending.delete(this.#cursor! + 1)
      this.#deliverNext(next)
      next = this.#pending.get(this.#cursor! + 1)
    }
    if (this.#pending.size === 0) {
      this.#gapSince = undefined
      return
    }
    // A gap: something between the cursor and what is waiting never arrived live.
    this.#gapSince ??= Date.now()
    if (this.#timer === undefined) this.#timer = setTimeout(() => void this.#fill(false), this.#options.retryMs)
  }

  async #fill(resuming: boolean): Promise<void> {
    this.#timer = undefined
    if (this.#closed) return
    const { read } = this.#options
    if (read) {
      this.#filling = true
      try {
        const stored = await read(this.#cursor!)
        for (const { event, json } of stored) {
          if (event.seq! > this.#cursor! && !this.#pending.has(event.seq!)) this.#pending.set(event.seq!, { event, json, replayed: resuming })
        }
        const oldest = stored[0]?.event.seq
        // A resume from further back than the log keeps starts at its oldest event.
        if (resuming && oldest !== undefined && oldest > this.#cursor! + 1) this.#skipTo(oldest - 1)
      } catch (err) {
        this.#options.onReadError(err)
      } finally {
        this.#filling = false
      }
    }
    if (this.#pending.size > 0 && this.#gapSince !== undefined && Date.now() - this.#gapSince >= this.#options.giveUpMs) {
      this.#skipTo(Math.min(...this.#pending.keys()) - 1)
    }
    this.#drain()
    if (resuming) this.#options.onReplayed?.()
  }

  #skipTo(seq: number): void {
    this.#options.onSkip(this.#cursor! + 1, seq)
    this.#cursor = seq
    this.#gapSince = undefined
  }
}
