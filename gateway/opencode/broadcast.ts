import type { GlobalEnvelope } from './schemas/event.ts'

export type EnvelopeListener = (envelope: GlobalEnvelope) => void

/**
 * Fans the OpenCode events of this gateway out to its SSE subscribers. Each
 * event travels in its /global/event envelope; /event sends the payload.
 */
export class EventBroadcast {
  readonly #listeners = new Set<EnvelopeListener>()

  subscribe(listener: EnvelopeListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  publish(envelope: GlobalEnvelope): void {
    for (const listener of this.#listeners) listener(envelope)
  }

  get size(): number {
    return this.#listeners.size
  }
}
