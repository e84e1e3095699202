/**
 * Property-based fuzzing of the chat-platform callback (spec §4.4): forged
 * signatures, timestamps and nonces, then correctly signed requests with
 * malformed, mistyped, oversized, deeply nested or non-UTF-8 bodies. Unsigned
 * requests are always 401 `Unauthorized`; signed ones are answered 200 or
 * with a clear `{code, message}`; never a 500; the heap stays flat.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ErrorCodes, type ErrorCode } from '../../../contract/mod.ts'
import { ChatConfigSchema } from '../../../gateway/chat/mod.ts'
import { signedQuery, textCallback } from '../../fixtures/chat.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'
import {
  anyJson,
  collectGarbage,
  deepNesting,
  hugeString,
  invalidUtf8,
  isClearError,
  malformedJson,
  settledHeap,
  withUnknownFields,
  wrongTypes,
} from './inputs.ts'

const TOKEN = 'fuzz-callback-token'
const URL_PATH = '/v1/chat/callback'

const forged = fc.record(
  {
    signature: fc.oneof(fc.string(), fc.base64String({ maxLength: 64 })),
    timestamp: fc.oneof(fc.string(), fc.integer().map(String), fc.constant(String(Date.now()))),
    nonce: fc.string(),
  },
  { requiredKeys: [] },
)

const bodies: fc.Arbitrary<string | Buffer> = fc.oneof(
  malformedJson,
  anyJson.map((value) => JSON.stringify(value)),
  withUnknownFields(
    wrongTypes(
      ['text', 'picture', 'file'],
      ['msgtype', 'conversationId', 'senderId', 'robotCode', 'text', 'senderNick', 'isAdmin', 'createAt'],
    ) as fc.Arbitrary<Record<string, unknown>>,
  ).map((value) => JSON.stringify({ ...value, msgtype: value.type })),
  // Valid text callbacks with unknown fields (robotCode left out: no reply is sent anywhere).
  withUnknownFields(fc.string({ minLength: 1, maxLength: 50 }).map((content) => textCallback(content, { robotCode: undefined }))).map((value) =>
    JSON.stringify(value),
  ),
  hugeString.map((text) => JSON.stringify(textCallback(text.repeat(12), { robotCode: undefined }))),
  deepNesting,
  invalidUtf8,
)

describe('fuzz - chat callbacks', () => {
  let gateway: GatewayUnderTest
  beforeAll(async () => {
    const chat = ChatConfigSchema.parse({
      enabled: true,
      app_key: 'app',
      app_secret: 'secret',
      callback_token: TOKEN,
      api_url: 'http://127.0.0.1:9',
      send_attempts: 1,
      request_timeout: '1s',
    })
    gateway = await gatewayUnderTest({ chat })
  })
  afterAll(async () => gateway.close())

  it('fuzz - a forged or missing signature is always 401 Unauthorized, before the body is read', async () => {
    await fc.assert(
      fc.asyncProperty(forged, fc.boolean(), fc.oneof(bodies, fc.constant('')), async (params, inHeaders, body) => {
        const query = new URLSearchParams(params as Record<string, string>).toString()
        const response = await gateway.app.inject({
          method: 'POST',
          url: inHeaders ? URL_PATH : `${URL_PATH}?${query}`,
          headers: { 'content-type': 'application/json', ...(inHeaders ? (params as Record<string, string>) : {}) },
          payload: body,
        })
        expect(response.statusCode).toBe(401)
        expect(response.body).toBe('Unauthorized')
      }),
      { numRuns: 300 },
    )
  })

  it('fuzz - a signed callback with any body is answered 200 or with a clear {code, message}, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, fc.constantFrom('application/json', 'text/plain', undefined), async (body, contentType) => {
        const response = await gateway.app.inject({
          method: 'POST',
          url: `${URL_PATH}?${signedQuery(TOKEN, Date.now())}`,
          headers: contentType ? { 'content-type': contentType } : {},
          payload: body,
        })
        const label = `${String(body).slice(0, 150)} → ${response.statusCode} ${response.body.slice(0, 200)}`
        expect(response.statusCode, label).not.toBe(500)
        if (response.statusCode === 200) {
          expect(response.json(), label).toMatchObject({ ok: true, processed: expect.any(Boolean) })
          return
        }
        const error = response.json()
        expect(isClearError(error), label).toBe(true)
        expect(response.statusCode, label).toBe(ErrorCodes[(error as { code: ErrorCode }).code].status)
      }),
      { numRuns: 300 },
    )
    // Still serving: a URL verification succeeds.
    const now = Date.now()
    const verify = await gateway.app.inject({ method: 'GET', url: `${URL_PATH}?${signedQuery(TOKEN, now)}` })
    expect(verify.statusCode).toBe(200)
    expect(verify.body).toBe(String(now))
  })

  it('fuzz - the heap stays flat over thousands of bad callbacks', async () => {
    const gc = collectGarbage()
    const inputs = fc.sample(fc.tuple(fc.boolean(), fc.oneof(malformedJson, deepNesting, invalidUtf8)), { numRuns: 2_000, seed: 11 })
    const run = async () => {
      for (const [signed, body] of inputs) {
        await gateway.app.inject({
          method: 'POST',
          url: signed ? `${URL_PATH}?${signedQuery(TOKEN, Date.now())}` : URL_PATH,
          headers: { 'content-type': 'application/json' },
          payload: body,
        })
      }
    }
    await run()
    const before = settledHeap(gc)
    await run()
    await run()
    expect(settledHeap(gc) - before).toBeLessThan(3 * 1024 * 1024)
  })
})
