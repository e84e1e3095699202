import type { ApiKeys } from './keys.ts'

/**
 * Where a client may put its API key (spec §5.1):
 *
 * | surface | carriers |
 * |---|---|
 * | REST and SSE | `Authorization: Bearer <key>`, `X-API-Key: <key>`, `Authorization: Basic` of user `opencode` with the key as password, `?api_key=<key>` |
 * | WebSocket handshake | `X-API-Key: <key>`, `?api_key=<key>` |
 *
 * Basic is what OpenCode's own clients send (`opencode attach --password`,
 * user `opencode` by default, as OpenCode's server expects). `?api_key=` on
 * REST and SSE is what HotPlex documents for clients that cannot set headers
 * (an EventSource); its value never reaches a log (observability/redact.ts
 * masks the parameter in every line). Anything else is not a carrier and is
 * ignored (Basic of another user, say from a proxy).
 */
export type Surface = 'http' | 'websocket'
export type Carrier = 'authorization' | 'x-api-key' | 'api_key'

export interface Presented {
  carrier: Carrier
  value: string
}

type Headers = Record<string, string | string[] | undefined>

/**
 * Every occurrence of every header, by lower-case name, from Node's
 * `rawHeaders` (`[name, value, name, value, …]`). `request.headers` cannot
 * serve: Node keeps only the first `Authorization` and joins repeated
 * `X-API-Key` values with ", ", so a second credential would go unseen. Pure.
 */
export function headerValues(rawHeaders: readonly string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = Object.create(null) as Record<string, string[]>
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase()
    ;(headers[name] ??= []).push(rawHeaders[i + 1]!)
  }
  return headers
}

const BEARER = /^Bearer(?:\s+(.*))?$/i
const BASIC = /^Basic\s+([A-Za-z0-9+/]+=*)$/i
/** The user OpenCode's clients send with Basic auth unless told otherwise (`OPENCODE_SERVER_USERNAME`). */
const OPENCODE_USER = 'opencode'

/** The password of `Basic base64(opencode:<password>)`; undefined for any other Basic credential. Pure. */
export function opencodeBasicPassword(authorization: string): string | undefined {
  const basic = BASIC.exec(authorization)
  if (!basic) return undefined
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon >= 0 && decoded.slice(0, colon) === OPENCODE_USER ? decoded.slice(colon + 1) : undefined
}

/** Every key value the request presents on the surface's carriers. Pure. */
export function presentedKeys(surface: Surface, headers: Headers, query: unknown): Presented[] {
  const found: Presented[] = []
  const add = (carrier: Carrier, value: string | string[] | undefined) => {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) found.push({ carrier, value: one.trim() })
  }
  if (surface === 'http') {
    const authorization = headers.authorization
    for (const one of Array.isArray(authorization) ? authorization : authorization === undefined ? [] : [authorization]) {
      const bearer = BEARER.exec(one.trim())
      if (bearer) add('authorization', bearer[1] ?? '')
      const password = opencodeBasicPassword(one.trim())
      if (password !== undefined) add('authorization', password)
    }
  }
  add('x-api-key', headers['x-api-key'])
  if (typeof query === 'object' && query !== null) {
    const value = (query as Record<string, unknown>).api_key
    if (typeof value === 'string' || (Array.isArray(value) && value.every((one) => typeof one === 'string'))) add('api_key', value)
  }
  return found
}

/** Why a request is refused: no key, a key that is not configured, or one carrier repeated with different keys. */
export type AuthRefusal = 'missing' | 'invalid' | 'repeated' | 'tenants'

export type AuthOutcome =
  | { ok: true /** Index of the matched key; -1 when no key is configured. */; key: number /** Its tenant (`default` without keys). */; tenant: string }
  | { ok: false; reason: AuthRefusal; carriers: Carrier[] }

/**
 * The decision, when keys are configured. Precedence when several carriers
 * are given: every key presented must be a configured key, and at least one
 * must be presented. A wrong key next to a right one is refused, so a client
 * (or a proxy adding a header) can never turn a bad credential into access by
 * adding a good one elsewhere, and mistakes show up at once. One carrier
 * repeated with different values (two `Authorization` headers, two
 * `api_key` parameters) is refused before any key is compared: proxies and
 * servers disagree on which of the two counts (Node reads the first).
 * Different carriers may hold different configured keys (key rotation).
 */
export function authenticate(keys: ApiKeys, presented: readonly Presented[]): AuthOutcome {
  if (!keys.enabled) return { ok: true, key: -1, tenant: keys.tenant(-1) }
  if (presented.length === 0) return { ok: false, reason: 'missing', carriers: [] }
  const repeated = presented.filter((one) => presented.some((other) => other.carrier === one.carrier && other.value !== one.value))
  if (repeated.length > 0) return { ok: false, reason: 'repeated', carriers: [...new Set(repeated.map((one) => one.carrier))] }
  let key = -1
  let allValid = true
  const tenants = new Set<string>()
  for (const { value } of presented) {
    // Every value is compared, so the time does not tell which carrier was wrong.
    const index = keys.match(value)
    if (index === -1) allValid = false
    else {
      if (key === -1) key = index
      tenants.add(keys.tenant(index))
    }
  }
  if (!allValid) return { ok: false, reason: 'invalid', carriers: presented.map((one) => one.carrier) }
  // Keys of two tenants at once: whose sessions would the request act on? Refused rather than guessed.
  if (tenants.size > 1) return { ok: false, reason: 'tenants', carriers: presented.map((one) => one.carrier) }
  return { ok: true, key, tenant: keys.tenant(key) }
}

/** The 401 message: says what to send, never echoes what was sent. */
export function unauthorizedMessage(surface: Surface, reason: AuthRefusal): string {
  const how =
    surface === 'websocket'
      ? 'the X-API-Key header or the api_key query parameter'
      : 'Authorization: Bearer <key>, X-API-Key: <key> or ?api_key=<key> (OpenCode clients: --password <key>)'
  if (reason === 'missing') return `an API key is required: send it with ${how}`
  if (reason === 'tenants') return `the request carries API keys of different tenants; send the keys of one tenant with ${how}`
  if (reason === 'repeated') return `the request carries different API keys in one place (a repeated header or parameter); send one key with ${how}`
  return `the API key is not valid (every key sent with ${how} must be a configured key)`
}
