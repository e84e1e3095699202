import { describe, expect, it } from 'vitest'
import { authenticate, presentedKeys, unauthorizedMessage, type Surface } from '../../../gateway/auth/credentials.ts'
import { ApiKeys } from '../../../gateway/auth/keys.ts'

const KEYS = new ApiKeys(['key-A', 'key-B'])

type Case = [name: string, surface: Surface, headers: Record<string, string | string[]>, query: Record<string, unknown>, expected: 'ok' | 'missing' | 'invalid']

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
  ['http Basic is not a carrier', 'http', { authorization: 'Basic a2V5LUE=' }, {}, 'missing'],
  ['http Basic is ignored beside a valid x-api-key', 'http', { authorization: 'Basic Zm9v', 'x-api-key': 'key-A' }, {}, 'ok'],
  ['http api_key query is not a REST carrier', 'http', {}, { api_key: 'key-A' }, 'missing'],
  ['http duplicated x-api-key joined by node is not a key', 'http', { 'x-api-key': 'key-A, key-B' }, {}, 'invalid'],
  ['ws x-api-key', 'websocket', { 'x-api-key': 'key-A' }, {}, 'ok'],
  ['ws api_key query', 'websocket', {}, { api_key: 'key-B' }, 'ok'],
  ['ws both valid', 'websocket', { 'x-api-key': 'key-A' }, { api_key: 'key-A' }, 'ok'],
  ['ws query wrong, header right: refused', 'websocket', { 'x-api-key': 'key-A' }, { api_key: 'nope' }, 'invalid'],
  ['ws repeated api_key, one wrong: refused', 'websocket', {}, { api_key: ['key-A', 'nope'] }, 'invalid'],
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
    expect(authenticate(open, [])).toEqual({ ok: true, key: -1 })
    expect(authenticate(open, presentedKeys('http', { authorization: 'Bearer anything' }, {}))).toEqual({ ok: true, key: -1 })
  })

  it('credentials - the outcome names the key, so the rate limit is per key', () => {
    expect(authenticate(KEYS, presentedKeys('http', { 'x-api-key': 'key-B' }, {}))).toEqual({ ok: true, key: 1 })
  })

  it('credentials - the 401 message says how to send a key and never echoes one', () => {
    for (const surface of ['http', 'websocket'] as const) {
      for (const reason of ['missing', 'invalid'] as const) {
        const message = unauthorizedMessage(surface, reason)
        expect(message).toMatch(surface === 'http' ? /Authorization: Bearer/ : /api_key/)
        expect(message).not.toContain('key-A')
      }
    }
  })
})
