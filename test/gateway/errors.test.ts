import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ErrorCodes, ServiceError } from '../../contract/mod.ts'
import { retryAfterSeconds, toHttpError } from '../../gateway/errors.ts'
import { RateLimitedError } from '../../gateway/limits/rate-limiter.ts'

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
