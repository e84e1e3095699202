import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CORS_ALLOWED_HEADERS } from '../../../gateway/auth/cors.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'

const KEY = 'cors-key-5d1e'
const ALLOWED = 'https://app.example.com'
const FOREIGN = 'https://evil.example'

let gateway: GatewayUnderTest
beforeAll(async () => {
  gateway = await gatewayUnderTest({ auth: { api_keys: [KEY], allowed_origins: [ALLOWED] } })
  // Stand-in for the probes (observability/ registers the real ones).
  gateway.app.get('/health', { config: { access: 'open' } }, async () => ({ status: 'healthy' }))
  await gateway.listen()
})
afterAll(() => gateway.close())

/** Routes of each kind: keyed REST, SSE streams, the chat route (POST), a probe (open). */
const ROUTES = [
  { path: '/session', method: 'GET' },
  { path: '/v1/sessions', method: 'GET' },
  { path: '/v1/sessions/s1', method: 'DELETE' },
  { path: '/v1/sessions/s1/events', method: 'GET' },
  { path: '/event', method: 'GET' },
  { path: '/v1/agent/chat', method: 'POST' },
  { path: '/health', method: 'GET' },
] as const

const preflight = (path: string, method: string, origin?: string) =>
  fetch(gateway.url + path, {
    method: 'OPTIONS',
    headers: {
      ...(origin !== undefined && { origin }),
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type, last-event-id',
    },
  })

describe('cors - preflights pass before the key check, for allowed origins only', () => {
  it.each(ROUTES)('cors - preflight $method $path from an allowed origin: 204 with the grant, no key needed', async ({ path, method }) => {
    const response = await preflight(path, method, ALLOWED)
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED)
    expect(response.headers.get('access-control-allow-methods')).toContain(method)
    expect(response.headers.get('access-control-allow-headers')?.split(', ')).toEqual([...CORS_ALLOWED_HEADERS])
    expect(response.headers.get('vary')).toMatch(/origin/i)
  })

  it.each(ROUTES)('cors - preflight $method $path from a foreign origin: 403 FORBIDDEN_ORIGIN, no grant', async ({ path, method }) => {
    const response = await preflight(path, method, FOREIGN)
    expect(response.status).toBe(403)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    expect(response.headers.get('access-control-allow-methods')).toBeNull()
  })

  it('cors - an OPTIONS without Origin is no preflight: it needs the key like any request', async () => {
    const response = await preflight('/session', 'GET')
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('cors - actual requests', () => {
  const request = (path: string, init: RequestInit & { origin?: string; key?: boolean }) =>
    fetch(gateway.url + path, {
      ...init,
      headers: {
        ...(init.origin !== undefined && { origin: init.origin }),
        ...(init.key !== false && { 'x-api-key': KEY }),
        ...(init.headers as Record<string, string>),
      },
    })

  it.each([
    { what: 'REST', path: '/session', status: 200 },
    { what: 'the directory', path: '/v1/sessions', status: 200 },
    { what: 'a probe', path: '/health', status: 200 },
  ])('cors - GET $what from an allowed origin: granted, retry-after exposed', async ({ path, status }) => {
    const response = await request(path, { origin: ALLOWED })
    expect(response.status).toBe(status)
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED)
    expect(response.headers.get('access-control-expose-headers')).toBe('retry-after')
  })

  it('cors - an SSE stream from an allowed origin carries the grant on its headers', async () => {
    const abort = new AbortController()
    const response = await request('/v1/sessions/s-cors/events', { origin: ALLOWED, signal: abort.signal })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/)
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED)
    abort.abort()
    await response.body?.cancel().catch(() => {})
  })

  it('cors - a refusal (no key) from an allowed origin is still readable by the page: 401 with the grant', async () => {
    const response = await request('/session', { origin: ALLOWED, key: false })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED)
  })

  it.each(['/session', '/v1/sessions', '/health'])('cors - GET %s from a foreign origin: no grant', async (path) => {
    const response = await request(path, { origin: FOREIGN })
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    expect(response.headers.get('access-control-expose-headers')).toBeNull()
  })

  it('cors - a request without Origin (CLI, SDK) gets no CORS header', async () => {
    const response = await request('/session', {})
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })
})
