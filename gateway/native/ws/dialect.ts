import type { ServiceEvent } from '../../../contract/mod.ts'

/**
 * Which shape a connection's client speaks: `native`, or `quickstart` once its first
 * `session_start`/`prompt` frame says so, or `hotplex` (hotplex.ts), chosen by the client
 * (`?dialect=hotplex`) or for the listener (`server.ws_dialect`).
 */
export type Dialect = 'native' | 'quickstart' | 'hotplex'

/** The dialects a connection can open in (`quickstart` is chosen by frames, not asked for). */
export const OPENING_DIALECTS = ['native', 'hotplex'] as const
export type OpeningDialect = (typeof OPENING_DIALECTS)[number]

/** Events that stay inside the service (the REST layer uses them); native clients do not see them. */
const INTERNAL_EVENTS = new Set<string>(['turn_started'])

export function isClientVisible(event: ServiceEvent): boolean {
  return !INTERNAL_EVENTS.has(event.event)
}

/**
 * The quick-start shape of an event: `{type, payload}` with the event's text as
 * `payload.content` and its other fields beside it.
 */
export function toQuickstart(event: ServiceEvent): { type: string; payload: Record<string, unknown> } {
  const { event: type, data, ...rest } = event as ServiceEvent & { data?: string }
  return { type, payload: { content: data ?? '', ...rest } }
}

/** The compatibility-layer event sent when a connection opens (spec §6.2). */
export function serverConnected(id: string): string {
  return JSON.stringify({ id, type: 'server.connected', properties: {} })
}
