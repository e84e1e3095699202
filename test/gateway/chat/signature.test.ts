import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sign, timestampMs, verify } from '../../../gateway/chat/signature.ts'

const TOKEN = 'callback-token'
const NOW = 1_700_000_000_000
const WINDOW = 5 * 60_000

describe('chat signature', () => {
  it('signature - is Base64 of HMAC-SHA256 keyed with the token over timestamp + token + nonce', () => {
    const expected = createHmac('sha256', TOKEN).update(`1700000000000${TOKEN}abc`).digest('base64')
    expect(sign(TOKEN, '1700000000000', 'abc')).toBe(expected)
    expect(expected).toMatch(/^[A-Za-z0-9+/]{43}=$/)
  })

  it('signature - a known vector', () => {
    // printf '%s' '1700000000000tokennonce' | openssl dgst -sha256 -hmac token -binary | base64
    expect(sign('token', '1700000000000', 'nonce')).toBe('xtaqtvWNSmKdhg6En7tw8HZgNcPSxYewtY4CrE84awM=')
  })

  const good = { signature: sign(TOKEN, String(NOW), 'n1'), timestamp: String(NOW), nonce: 'n1' }
  const cases: { name: string; params: Record<string, string | undefined>; now?: number; result: string }[] = [
    { name: 'valid', params: good, result: 'ok' },
    { name: 'valid at the early edge of the window', params: good, now: NOW - WINDOW, result: 'ok' },
    { name: 'valid at the late edge of the window', params: good, now: NOW + WINDOW, result: 'ok' },
    { name: 'stale: older than the window', params: good, now: NOW + WINDOW + 1, result: 'stale' },
    { name: 'stale: from the future beyond the window', params: good, now: NOW - WINDOW - 1, result: 'stale' },
    { name: 'wrong signature', params: { ...good, signature: sign('other-token', String(NOW), 'n1') }, result: 'bad_signature' },
    { name: 'signature of another nonce', params: { ...good, nonce: 'n2' }, result: 'bad_signature' },
    { name: 'signature of another timestamp', params: { ...good, timestamp: String(NOW + 1) }, result: 'bad_signature' },
    { name: 'truncated signature', params: { ...good, signature: good.signature.slice(0, 20) }, result: 'bad_signature' },
    { name: 'signature without its padding', params: { ...good, signature: good.signature.replace(/=+$/, '') }, result: 'bad_signature' },
    { name: 'missing signature', params: { ...good, signature: undefined }, result: 'missing' },
    { name: 'empty signature', params: { ...good, signature: '' }, result: 'missing' },
    { name: 'missing timestamp', params: { ...good, timestamp: undefined }, result: 'missing' },
    { name: 'missing nonce', params: { ...good, nonce: undefined }, result: 'missing' },
    { name: 'timestamp not a number', params: { ...good, timestamp: 'yesterday' }, result: 'bad_timestamp' },
    { name: 'negative timestamp', params: { ...good, timestamp: '-5' }, result: 'bad_timestamp' },
  ]
  it.each(cases)('verify - $name', ({ params, now, result }) => {
    const outcome = verify(params, TOKEN, now ?? NOW, WINDOW)
    expect(outcome.ok ? 'ok' : outcome.reason).toBe(result)
  })

  it('verify - a timestamp in seconds is accepted and read as seconds', () => {
    const seconds = String(NOW / 1000)
    const outcome = verify({ signature: sign(TOKEN, seconds, 'n'), timestamp: seconds, nonce: 'n' }, TOKEN, NOW + 1000, WINDOW)
    expect(outcome).toEqual({ ok: true, timestampMs: NOW })
  })

  it.each([
    ['1700000000', 1_700_000_000_000],
    ['1700000000000', 1_700_000_000_000],
    ['0', 0],
    ['17e11', undefined],
    ['', undefined],
    ['12345678901234567', undefined],
  ])('timestampMs - %s', (text, ms) => {
    expect(timestampMs(text)).toBe(ms)
  })
})
