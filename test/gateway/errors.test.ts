import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ErrorCodes, ServiceError } from '../../contract/mod.ts'
import { retryAfterSeconds, toHttpError } from '../../gateway/errors.ts'
import { RateLimitedError } from '../../gateway/limits/rate-limiter.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../fixtures/gateway.ts'
import { handshake } from '../fixtures/ws-handshake.ts'

describe('errors - one registry, one mapping', () => {
  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'PAYLOAD_TOO_LARGE'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'BAD_JSON'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 'BAD_JSON'],
    ['FST_ERR_VALIDATION', 400, 'BAD_REQUEST'],
    ['FST_ERR_SOMETHING_NEW', 422, 'BAD_REQUEST'],
    [undefined, 413, 'PAYLOAD_TOO_LARGE'],
  ] as const)('errors - fastify %s (%i) is %s', (code, statusCode, expected) => {
    const error = toHttpError(Object.assign(new Error('x'), { code, statusCode }))
    expect(error.code).toBe(expected)
    expect(error.status).toBe(ErrorCodes[expected].status)
    expect(error.cause).toBeInstanceOf(Error)
  })

  it('errors - a JSON SyntaxError is BAD_JSON; anything else unexpected is INTERNAL; a ServiceError stays itself', () => {
    expect(toHttpError(Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 })).code).toBe('BAD_JSON')
    expect(toHttpError(new Error('boom')).code).toBe('INTERNAL')
    const own = new ServiceError('OVERLOADED', 'full')
    expect(toHttpError(own)).toBe(own)
  })

  it('errors - Retry-After: the bucket wait for RATE_LIMITED, the configured one for every 503 and 429, none otherwise', () => {
    expect(retryAfterSeconds(new RateLimitedError(2_300), 5_000)).toBe(3)
    expect(retryAfterSeconds(new ServiceError('OVERLOADED', 'x'), 5_000)).toBe(5)
    expect(retryAfterSeconds(new ServiceError('SHUTTING_DOWN', 'x'), 1_500)).toBe(2)
    expect(retryAfterSeconds(new ServiceError('QUEUE_FULL', 'x'), 5_000)).toBe(5)
    expect(retryAfterSeconds(new ServiceError('BAD_REQUEST', 'x'), 5_000)).toBeUndefined()
  })

  it('errors - the README error table lists every code of the registry with its status, and nothing else', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const table = readme.slice(readme.indexOf('## Error codes'))
    const rows = [...table.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)])
    const registry = Object.entries(ErrorCodes).map(([code, entry]) => [code, entry.status])
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(registry))
  })
})

describe('errors - requests the HTTP parser refuses', () => {
  let gateway: GatewayUnderTest
  beforeAll(async () => {
    gateway = await gatewayUnderTest()
    await gateway.listen()
  })
  afterAll(async () => {
    await gateway.close()
  })

  /** A raw GET, so that no client library cuts the URL short. */
  function get(url: string): Promise<{ status: number; type: string | undefined; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = request(url, (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => (text += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'], body: JSON.parse(text) }))
      })
      req.on('error', reject)
      req.end()
    })
  }

  const longQuery = `limit=${'q'.repeat(20_000)}`

  it('errors - a request line over 16 KiB is 431 HEADERS_TOO_LARGE in the service shape, on HTTP and on the WebSocket route', async () => {
    const plain = await get(`${gateway.url}/session?${longQuery}`)
    expect(plain).toMatchObject({
      status: 431,
      type: 'application/json; charset=utf-8',
      body: { code: 'HEADERS_TOO_LARGE', message: expect.stringContaining('16 KiB') },
    })
    const ws = await handshake(`${gateway.wsUrl}?${longQuery}`)
    expect(ws).toMatchObject({ opened: false, status: 431, body: { code: 'HEADERS_TOO_LARGE' } })
  })
})
