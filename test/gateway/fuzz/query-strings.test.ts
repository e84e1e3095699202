/**
 * Property-based fuzzing of URLs: query strings (OpenCode `limit`, unknown
 * parameters, the WebSocket's `session_id`, `api_key`, `last_seq`) and path
 * segments, with bad percent-encoding, repeated and huge values. Every
 * answer is a success or a clear error in the route's shape; the WebSocket
 * handshake opens or is refused with a JSON error.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ErrorCodes, type ErrorCode } from '../../../contract/mod.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'
import { handshake } from '../../fixtures/ws-handshake.ts'
import { isClearError } from './inputs.ts'

/** A query value: text of any kind, broken percent-encoding, numbers in odd spellings, long runs. */
const value = fc.oneof(
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.string({ maxLength: 30, unit: 'grapheme' }).map(encodeURIComponent),
  fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%C0%AF', '%FF', '-1', '0', '1e309', 'NaN', '0x10', '9007199254740993', '', '[]', '{}', '%2e%2e%2f'),
  fc.integer({ min: 500, max: 5_000 }).map((n) => 'q'.repeat(n)),
)
const name = fc.oneof(
  fc.constantFrom('limit', 'session_id', 'api_key', 'last_seq', 'directory', '__proto__', 'constructor', 'limit[]'),
  fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent),
)
const query = fc.array(fc.tuple(name, value), { maxLength: 6 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'))
const segment = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom('%', '%zz', '..', '%2e%2e', '%00', 'x'.repeat(400), 'ses_%E0%A4%A'),
)

describe('fuzz - query strings and paths', () => {
  let gateway: GatewayUnderTest
  beforeAll(async () => {
    gateway = await gatewayUnderTest()
    await gateway.listen()
    await gateway.app.inject({ method: 'POST', url: '/session', payload: { session_id: 'fuzz' } })
  })
  afterAll(async () => gateway.close())

  const targets = fc.oneof(
    query.map((q) => ({ url: `/session/fuzz/message?${q}`, shape: 'opencode' as const })),
    query.map((q) => ({ url: `/session?${q}`, shape: 'opencode' as const })),
    fc.tuple(segment, query).map(([id, q]) => ({ url: `/session/${id}/message?${q}`, shape: 'opencode' as const })),
    fc.tuple(segment, query).map(([id, q]) => ({ url: `/session/${id}?${q}`, shape: 'opencode' as const })),
    fc.tuple(segment, query).map(([path, q]) => ({ url: `/${path}?${q}`, shape: 'service' as const })),
  )

  it('fuzz - every URL is served or answered with a clear error in its shape, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(targets, async ({ url, shape }) => {
        const response = await gateway.app.inject({ method: 'GET', url })
        const label = `${url.slice(0, 200)} → ${response.statusCode} ${response.body.slice(0, 200)}`
        expect(response.statusCode, label).not.toBe(500)
        if (response.statusCode < 400) return
        const body = response.json()
        // A path that matches no route, or cannot be decoded, is the service's; the rest keep their route's shape.
        const error =
          'code' in body && !('name' in body)
            ? body
            : shape === 'opencode'
              ? body.name === 'NotFoundError'
                ? { code: 'SESSION_NOT_FOUND', message: body.data?.message }
                : body.data
              : undefined
        expect(isClearError(error), label).toBe(true)
        expect(response.statusCode, label).toBe(ErrorCodes[(error as { code: ErrorCode }).code].status)
      }),
      { numRuns: 500 },
    )
    expect((await gateway.app.inject({ method: 'GET', url: '/session/fuzz/message?limit=1' })).statusCode).toBe(200)
  })

  it('fuzz - a WebSocket handshake with any query opens, or is refused with a JSON error', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const result = await handshake(`${gateway.wsUrl}?${q}`)
        if (result.opened) return
        expect(isClearError(result.body), `${q.slice(0, 200)} → ${result.status} ${JSON.stringify(result.body).slice(0, 200)}`).toBe(true)
        expect(result.status).toBe(ErrorCodes[(result.body as { code: ErrorCode }).code].status)
      }),
      { numRuns: 150 },
    )
    expect(await handshake(gateway.wsUrl)).toEqual({ opened: true })
  })
})
