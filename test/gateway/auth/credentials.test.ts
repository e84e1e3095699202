import { describe, expect, it } from 'vitest'
import { authenticate, headerValues, presentedKeys, unauthorizedMessage, type Surface } from '../../../gateway/auth/credentials.ts'
import { ApiKeys } from '../../../gateway/auth/keys.ts'

const KEYS = new ApiKeys(['key-A', 'key-B'])

type Case = [
  name: string,
  surface: Surface,
  headers: Record<string, string | string[]>,
  query: Record<string, unknown>,
  expected: 'ok' | 'missing' | 'invalid' | 'repeated',
]

const CASES: Case[] = [
  ['http bearer', 'http', { authorization: 'Bearer key-A' }, {}, 'ok'],
  ['http bearer, scheme in any case', 'http', { authorization: 'bearer key-B' }, {}, 'ok'],
  ['http x-api-key', 'http', { 'x-api-key': 'key-B' }, {}, 'ok'],
  ['http both carriers, both valid (rotation: old and new key)', 'http', { authorization: 'Bearer key-A', 'x-api-key': 'key-B' }, {}, 'ok'],
  ['http nothing', 'http', {}, {}, 'missing'],
  ['http wrong bearer', 'http', { authorization: 'Bearer nope' }, {}, 'invalid'],
  ['http empty bearer', 'http', { authorization: 'Bearer' }, {}, 'invalid'],
  ['http wrong x-api-key', 'http', { 'x-api-key': 'nope' }, {}, 'invalid'],
  ['http one right, one wrong: refused', 'http', { authorization: 'Bearer key-A', 'x-api-key': 'nope' }, {}, 'invalid'],
  ['http wrong bearer, right x-api-key: refused', 'http', { authorization: 'Bearer nope', 'x-api-key': 'key-A' }, {}, 'invalid'],
  ['http Basic without a user is not a carrier', 'http', { authorization: 'Basic a2V5LUE=' }, {}, 'missing'],
  ["http Basic of another user (a proxy's) is not a carrier", 'http', { authorization: 'Basic cHJveHk6a2V5LUE=' }, {}, 'missing'],
  ['http Basic of user opencode carries the key as password (opencode attach --password)', 'http', { authorization: 'Basic b3BlbmNvZGU6a2V5LUE=' }, {}, 'ok'],
  ['http Basic of user opencode with a wrong password', 'http', { authorization: 'Basic b3BlbmNvZGU6bm9wZQ==' }, {}, 'invalid'],
  ['http Basic of user opencode, a password with a colon', 'http', { authorization: 'Basic b3BlbmNvZGU6a2V5LUE6eA==' }, {}, 'invalid'],
  [
    'http Basic of user opencode beside a Bearer with another key: refused as repeated',
    'http',
    { authorization: ['Basic b3BlbmNvZGU6a2V5LUI=', 'Bearer key-A'] },
    {},
    'repeated',
  ],
  ['ws Basic is not a WebSocket carrier', 'websocket', { authorization: 'Basic b3BlbmNvZGU6a2V5LUE=' }, {}, 'missing'],
  ['http Basic is ignored beside a valid x-api-key', 'http', { authorization: 'Basic Zm9v', 'x-api-key': 'key-A' }, {}, 'ok'],
  ['http api_key query (as HotPlex documents)', 'http', {}, { api_key: 'key-A' }, 'ok'],
  ['http api_key query wrong, bearer right: refused', 'http', { authorization: 'Bearer key-A' }, { api_key: 'nope' }, 'invalid'],
  ['http repeated api_key with different keys: refused as repeated', 'http', {}, { api_key: ['key-A', 'key-B'] }, 'repeated'],
  ['http duplicated x-api-key joined by node is not a key', 'http', { 'x-api-key': 'key-A, key-B' }, {}, 'invalid'],
  ['ws x-api-key', 'websocket', { 'x-api-key': 'key-A' }, {}, 'ok'],
  ['ws api_key query', 'websocket', {}, { api_key: 'key-B' }, 'ok'],
  ['ws both valid', 'websocket', { 'x-api-key': 'key-A' }, { api_key: 'key-A' }, 'ok'],
  ['ws query wrong, header right: refused', 'websocket', { 'x-api-key': 'key-A' }, { api_key: 'nope' }, 'invalid'],
  ['ws repeated api_key, one wrong: refused as repeated', 'websocket', {}, { api_key: ['key-A', 'nope'] }, 'repeated'],
  ['ws repeated api_key, two valid keys: refused as repeated', 'websocket', {}, { api_key: ['key-A', 'key-B'] }, 'repeated'],
  ['ws repeated api_key, the same key twice', 'websocket', {}, { api_key: ['key-A', 'key-A'] }, 'ok'],
  ['http two Authorization headers, second wrong: refused', 'http', { authorization: ['Bearer key-A', 'Bearer nope'] }, {}, 'repeated'],
  ['http two Authorization headers, two valid keys: refused', 'http', { authorization: ['Bearer key-A', 'Bearer key-B'] }, {}, 'repeated'],
  ['http two Authorization headers with the same key', 'http', { authorization: ['Bearer key-A', 'Bearer key-A'] }, {}, 'ok'],
  ['http two X-API-Key headers, different keys: refused', 'http', { 'x-api-key': ['key-A', 'key-B'] }, {}, 'repeated'],
  ['http Basic beside a Bearer is not a second credential', 'http', { authorization: ['Basic Zm9v', 'Bearer key-A'] }, {}, 'ok'],
  ['ws bearer is not a WebSocket carrier', 'websocket', { authorization: 'Bearer key-A' }, {}, 'missing'],
  ['ws nothing', 'websocket', {}, {}, 'missing'],
  ['ws non-string query value is ignored', 'websocket', {}, { api_key: { nested: 'key-A' } }, 'missing'],
]

describe('auth credentials - carriers and precedence', () => {
  it.each(CASES)('credentials - %s', (_name, surface, headers, query, expected) => {
    const outcome = authenticate(KEYS, presentedKeys(surface, headers, query))
    expect(outcome.ok ? 'ok' : outcome.reason).toBe(expected)
  })

  it('credentials - with no key configured every request passes', () => {
    const open = new ApiKeys([])
    expect(authenticate(open, [])).toEqual({ ok: true, key: -1, tenant: 'default' })
    expect(authenticate(open, presentedKeys('http', { authorization: 'Bearer anything' }, {}))).toEqual({ ok: true, key: -1, tenant: 'default' })
  })

  it('credentials - the outcome names the key, so the rate limit is per key', () => {
    expect(authenticate(KEYS, presentedKeys('http', { 'x-api-key': 'key-B' }, {}))).toEqual({ ok: true, key: 1, tenant: 'default' })
  })

  it('credentials - the 401 message says how to send a key and never echoes one', () => {
    for (const surface of ['http', 'websocket'] as const) {
      for (const reason of ['missing', 'invalid', 'repeated'] as const) {
        const message = unauthorizedMessage(surface, reason)
        expect(message).toMatch(surface === 'http' ? /Authorization: Bearer/ : /api_key/)
        expect(message).not.toContain('key-A')
      }
    }
  })
})

describe('auth credentials - every occurrence of a header', () => {
  it('credentials - headerValues keeps each repeated header, by lower-case name', () => {
    expect(headerValues(['Authorization', 'Bearer key-A', 'Host', 'h', 'authorization', 'Bearer nope', 'X-API-Key', 'key-B'])).toEqual({
      authorization: ['Bearer key-A', 'Bearer nope'],
      host: ['h'],
      'x-api-key': ['key-B'],
    })
  })

  it('credentials - a second Authorization header with another key is refused, not ignored', () => {
    const raw = ['Authorization', 'Bearer key-A', 'Authorization', 'Bearer nope']
    const outcome = authenticate(KEYS, presentedKeys('http', headerValues(raw), {}))
    expect(outcome).toEqual({ ok: false, reason: 'repeated', carriers: ['authorization'] })
  })
})
