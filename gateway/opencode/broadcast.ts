import type { GlobalEnvelope } from './schemas/event.ts'

export type EnvelopeListener = (envelope: GlobalEnvelope) => void

/**
 * Fans the OpenCode events of this gateway out to its SSE subscribers. Each
 * event travels in its /global/event envelope; /event sends the payload.
 * A subscriber gets the events of its own tenant's sessions only.
 */
export class EventBroadcast {
  readonly #listeners = new Map<EnvelopeListener, string>()

  subscribe(tenant: string, listener: EnvelopeListener): () => void {
    this.#listeners.set(listener, tenant)
    return () => this.#listeners.delete(listener)
  }

  /** `tenant`: the tenant of the session the event is about. */
  publish(envelope: GlobalEnvelope, tenant: string): void {
    for (const [listener, subscriber] of this.#listeners) if (subscriber === tenant) listener(envelope)
  }

  get size(): number {
    return this.#listeners.size
  }
}
