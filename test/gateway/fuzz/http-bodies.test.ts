/**
 * Property-based fuzzing of REST bodies: OpenCode routes, the quick-start
 * chat route and an unknown route get malformed JSON, wrong types, unknown
 * fields, huge strings, deep nesting and bytes that are not UTF-8, under
 * various content types. Every answer is an error in the route's documented
 * shape (never a 500, never fastify's own body), the server serves a valid
 * request afterwards, and the heap stays flat.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ErrorCodes, type ErrorCode } from '../../../contract/mod.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'
import {
  anyJson,
  collectGarbage,
  deepNesting,
  FUZZ_LIMIT,
  hugeString,
  invalidUtf8,
  isClearError,
  malformedJson,
  settledHeap,
  withUnknownFields,
  wrongTypes,
} from './inputs.ts'

/** Where a body goes, and which error shape answers there. */
const ROUTES = [
  { method: 'POST', url: '/session', shape: 'opencode' },
  { method: 'POST', url: '/session/fuzz/message', shape: 'opencode' },
  { method: 'POST', url: '/session/fuzz/prompt_async', shape: 'opencode' },
  { method: 'POST', url: '/session/no-such-session/prompt_async', shape: 'opencode' },
  { method: 'POST', url: '/v1/agent/chat', shape: 'chat' },
  { method: 'POST', url: '/no/such/route', shape: 'service' },
] as const

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  undefined,
] as const

const PROMPT_FIELDS = [
  'prompt',
  'parts',
  'message',
  'session_id',
  'work_dir',
  'system_prompt',
  'system',
  'model',
  'agent',
  'noReply',
  'messageID',
  'instructions',
  'title',
]

const bodies: fc.Arbitrary<string | Buffer> = fc.oneof(
  malformedJson,
  anyJson.map((value) => JSON.stringify(value)),
  withUnknownFields(wrongTypes(['x'], PROMPT_FIELDS) as fc.Arbitrary<Record<string, unknown>>).map((value) => JSON.stringify(value)),
  hugeString.map((text) => JSON.stringify({ prompt: text, message: text })),
  deepNesting,
  invalidUtf8,
  fc.constantFrom('{"__proto__":{"polluted":true},"prompt":"x"}', '{"constructor":{"prototype":{"polluted":true}},"message":"x"}'),
)

interface FuzzRequest {
  route: (typeof ROUTES)[number]
  body: string | Buffer
  contentType: string | undefined
}

const requests: fc.Arbitrary<FuzzRequest> = fc.record({ route: fc.constantFrom(...ROUTES), body: bodies, contentType: fc.constantFrom(...CONTENT_TYPES) })

/** The error body of an answer in the route's shape, or undefined when the shape is wrong. */
function errorIn(shape: (typeof ROUTES)[number]['shape'], body: any): unknown {
  if (shape === 'service') return body
  if (shape === 'chat') return body?.error
  // OpenCode: {name, data: {message, code}}; NotFoundError has no code.
  if (typeof body?.name !== 'string' || typeof body?.data?.message !== 'string') return undefined
  return body.name === 'NotFoundError' ? { code: 'SESSION_NOT_FOUND', message: body.data.message } : body.data
}

describe('fuzz - HTTP bodies', () => {
  let gateway: GatewayUnderTest
  beforeAll(async () => {
    gateway = await gatewayUnderTest({ limits: { max_body: FUZZ_LIMIT } })
    expect((await gateway.app.inject({ method: 'POST', url: '/session', payload: { session_id: 'fuzz' } })).statusCode).toBe(200)
  })
  afterAll(async () => gateway.close())

  const send = ({ route, body, contentType }: FuzzRequest) =>
    gateway.app.inject({ method: route.method, url: route.url, payload: body, headers: contentType === undefined ? {} : { 'content-type': contentType } })

  it('fuzz - every bad body is answered with a clear error in the route shape, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(requests, async (request) => {
        const response = await send(request)
        const label = `${request.route.url} ${request.contentType} ${String(request.body).slice(0, 120)} → ${response.statusCode} ${response.body.slice(0, 200)}`
        expect(response.statusCode, label).not.toBe(500)
        if (response.statusCode < 400) {
          // A body that happens to be valid is served (a session created, a prompt accepted).
          expect(request.route.url, label).not.toBe('/no/such/route')
          return
        }
        expect(response.headers['content-type'], label).toMatch(/^application\/json/)
        const error = errorIn(request.route.shape, response.json())
        expect(isClearError(error), label).toBe(true)
        expect(response.statusCode, label).toBe(errorStatus(error))
      }),
      { numRuns: 500 },
    )
    // Nothing was polluted, and a valid request succeeds.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const after = await gateway.app.inject({ method: 'POST', url: '/session', payload: { session_id: 'after-fuzz' } })
    expect(after.statusCode).toBe(200)
    expect(after.json()).toMatchObject({ id: 'after-fuzz' })
  })

  it('fuzz - JSON that is not UTF-8 is BAD_JSON, not quietly repaired', async () => {
    await fc.assert(
      fc.asyncProperty(invalidUtf8, fc.constantFrom('/v1/agent/chat', '/session/fuzz/prompt_async'), async (body, url) => {
        const response = await gateway.app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json' } })
        expect(response.statusCode).toBe(400)
        expect(JSON.stringify(response.json())).toContain('BAD_JSON')
      }),
      { numRuns: 50 },
    )
  })

  it('fuzz - the heap stays flat over thousands of bad bodies', async () => {
    const gc = collectGarbage()
    // Bodies that no route accepts: a valid one would legitimately store a session or a message.
    const inputs = fc.sample(
      fc.record({
        route: fc.constantFrom(...ROUTES),
        body: fc.oneof(
          malformedJson,
          deepNesting,
          invalidUtf8,
          hugeString.map((text) => JSON.stringify({ noReply: 1, pad: text })),
        ),
        contentType: fc.constant('application/json'),
      }),
      { numRuns: 2_000, seed: 7 },
    )
    const run = async () => {
      for (const input of inputs) await send(input)
    }
    await run()
    const before = settledHeap(gc)
    await run()
    await run()
    expect(settledHeap(gc) - before).toBeLessThan(3 * 1024 * 1024)
  })
})

/** The HTTP status the registry gives the error's code. */
function errorStatus(error: unknown): number {
  return ErrorCodes[(error as { code: ErrorCode }).code].status
}
