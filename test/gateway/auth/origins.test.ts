import { describe, expect, it } from 'vitest'
import { normalizeOrigin, OriginPolicy } from '../../../gateway/auth/origins.ts'

describe('auth origins - the browser origin rule', () => {
  it.each([
    ['https://app.example.com', 'https://app.example.com'],
    ['HTTPS://App.Example.COM', 'https://app.example.com'],
    ['https://app.example.com:443', 'https://app.example.com'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://localhost:3000/', 'http://localhost:3000'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
  ])('origins - %s normalizes to %s', (text, normal) => {
    expect(normalizeOrigin(text)).toBe(normal)
  })

  it.each([
    'null',
    '',
    'example.com',
    'https://app.example.com/path',
    'https://user:pw@app.example.com',
    'https://app.example.com?x=1',
    'file:///etc/passwd',
    'not a url',
  ])('origins - %j is not an origin', (text) => {
    expect(normalizeOrigin(text)).toBeUndefined()
  })

  const policy = new OriginPolicy(['https://app.example.com', 'http://localhost:3000'])

  it.each([
    ['no Origin (CLI, SDK, server)', undefined, true],
    ['a listed origin', 'https://app.example.com', true],
    ['a listed origin spelled differently', 'https://APP.example.com:443', true],
    ['another origin', 'https://evil.example', false],
    ['a listed host on another port', 'http://localhost:3001', false],
    ['a listed host with another scheme', 'http://app.example.com', false],
    ['Origin: null (sandboxed page, file)', 'null', false],
    ['an empty Origin', '', false],
    ['a sub-domain of a listed origin', 'https://x.app.example.com', false],
  ] as const)('origins - %s → %s', (_name, origin, allowed) => {
    expect(policy.allows(origin)).toBe(allowed)
  })

  it('origins - the default (empty list) refuses every browser origin and allows non-browser clients', () => {
    const closed = new OriginPolicy([])
    expect(closed.allows(undefined)).toBe(true)
    expect(closed.allows('http://127.0.0.1:8080')).toBe(false)
    expect(closed.allows('http://localhost:8080')).toBe(false)
  })

  it('origins - * allows any origin, null included', () => {
    const any = new OriginPolicy(['*'])
    expect(any.allows('https://anything.example')).toBe(true)
    expect(any.allows('null')).toBe(true)
  })
})
