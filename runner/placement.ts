import type { Bus, BusMessage, Subscription } from '../bus/mod.ts'

/** A runner's membership of the placement queue group, where new and orphaned sessions are offered: in while it has room. */
export class Placement {
  readonly #bus: Bus
  readonly #subject: string
  readonly #handle: (msg: BusMessage) => void
  #subscription: Subscription | undefined

  constructor(bus: Bus, subject: string, handle: (msg: BusMessage) => void) {
    this.#bus = bus
    this.#subject = subject
    this.#handle = handle
  }

  /** Joins the group when there is room, leaves it when not. */
  update(room: boolean): void {
    if (room && !this.#subscription) {
      this.#subscription = this.#bus.subscribe(this.#subject, this.#handle, { queue: 'runners' })
    } else if (!room && this.#subscription) {
      this.#subscription.unsubscribe()
      this.#subscription = undefined
    }
  }
}
