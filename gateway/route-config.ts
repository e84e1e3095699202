/**
 * How the guard (gateway/guard.ts) treats a route, declared by the route
 * itself in its fastify `config`, so the guard needs no list of paths and
 * imports no feature: `app.get('/health', { config: { access: 'open' } }, …)`.
 */
export interface RouteAccess {
  /**
   * `open`: no API key, origin check or rate limit (the probes, which orchestrators call without
   * secrets; the chat callback, checked by its own signature). Default `key`: everything else,
   * unknown paths included.
   */
  access?: 'open' | 'key'
  /** A long-lived stream (WebSocket, SSE): new ones are refused while the service drains. */
  stream?: boolean
  /** The route speaks WebSocket: its handshake may carry the key in `?api_key=` (gateway/auth/credentials.ts). */
  websocket?: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig extends RouteAccess {}
}

/** The config of a route anyone may call (see RouteAccess.access). */
export const OPEN_ROUTE = { access: 'open' } as const satisfies RouteAccess

/** The config of an event stream that needs the key (see RouteAccess.stream). */
export const STREAM_ROUTE = { stream: true } as const satisfies RouteAccess
