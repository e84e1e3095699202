/**
 * The browser-origin rule (spec §4.3): a request that carries an `Origin`
 * header comes from a browser page; it is served only when that origin is on
 * the allowed list. Requests without `Origin` (CLIs, SDKs, servers) are not
 * affected. The list is empty by default, so a web page the user happens to
 * visit cannot drive the agent on their machine (a WebSocket is not subject to
 * CORS, and DNS rebinding defeats same-origin checks based on `Host`).
 */

/** `scheme://host[:port]` in the canonical form browsers send (lower case, default port dropped), or undefined. */
export function normalizeOrigin(text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.origin === 'null' || url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined
  // `new URL('https://x/').origin` has no trailing slash; `https://x/` is accepted as a spelling of it.
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]+\/?$/i.test(text.trim())) return undefined
  return url.origin
}

/** Decides whether a request's Origin header may be served. */
export class OriginPolicy {
  readonly #allowed: Set<string>
  readonly #any: boolean

  /** `allowed`: normalized origins, or `*` for any. */
  constructor(allowed: readonly string[]) {
    this.#any = allowed.includes('*')
    this.#allowed = new Set(allowed.filter((origin) => origin !== '*'))
  }

  /** True when the request has no Origin, or one on the list. `Origin: null` (sandboxed pages, files) only with `*`. */
  allows(origin: string | string[] | undefined): boolean {
    if (origin === undefined) return true
    if (this.#any) return true
    if (Array.isArray(origin)) return origin.length > 0 && origin.every((one) => this.allows(one))
    const normal = normalizeOrigin(origin)
    return normal !== undefined && this.#allowed.has(normal)
  }
}
