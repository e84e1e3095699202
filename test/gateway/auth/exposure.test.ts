import { describe, expect, it } from 'vitest'
import { isLoopback, warnIfExposed } from '../../../gateway/auth/exposure.ts'
import { captureLog } from '../../fixtures/chat.ts'

describe('auth exposure - the warning of an open service', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['localhost', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['192.168.1.10', false],
    ['my-host.example', false],
  ] as const)('exposure - %s is loopback: %s', (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback)
  })

  it('exposure - no key and a non-loopback bind address logs one loud warning', () => {
    const { log, lines } = captureLog()
    expect(warnIfExposed(log, '0.0.0.0', false)).toBe(true)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ level: 'warn', host: '0.0.0.0', security: 'no_api_key' })
    expect(lines[0]!.msg).toMatch(/^SECURITY WARNING: no API key/)
    expect(lines[0]!.msg).toMatch(/SERVICE_API_KEY/)
  })

  it('exposure - no warning with a key, or on loopback', () => {
    const { log, lines } = captureLog()
    expect(warnIfExposed(log, '0.0.0.0', true)).toBe(false)
    expect(warnIfExposed(log, '127.0.0.1', false)).toBe(false)
    expect(lines).toEqual([])
  })
})
