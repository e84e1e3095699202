import { describe, expect, it } from 'vitest'
import { allowedTargets, isAllowed, isLoopback, parseHostPort, urlTarget } from '../../../runner/sandbox-exec/net-allow.ts'
import { parseRequestLine } from '../../../runner/sandbox-exec/net-gate.ts'

describe('sandbox network allowlist', () => {
  it.each([
    [{ ANTHROPIC_BASE_URL: 'http://127.0.0.1:41234' }, [], ['127.0.0.1:41234']],
    [{ ANTHROPIC_BASE_URL: 'https://llm.example.com/v1' }, ['extra.example.com:8443'], ['llm.example.com:443', 'extra.example.com:8443']],
    [{}, [], ['api.anthropic.com:443']],
    [{ ANTHROPIC_BASE_URL: 'not a url' }, [], ['api.anthropic.com:443']],
    [{ ANTHROPIC_BASE_URL: 'http://[::1]:9000' }, ['[::1]:9000'], ['::1:9000']],
  ])('targets - %j + %j', (env, extra, expected) => {
    expect(allowedTargets(env, extra).map((t) => `${t.host}:${t.port}`)).toEqual(expected)
  })

  it.each([
    ['api.anthropic.com:443', { host: 'api.anthropic.com', port: 443 }],
    ['[::1]:80', { host: '::1', port: 80 }],
    ['Host.Example:1', { host: 'host.example', port: 1 }],
    ['nohost', undefined],
    ['a:0', undefined],
    ['a:70000', undefined],
  ])('host:port - %s', (text, expected) => {
    expect(parseHostPort(text)).toEqual(expected)
  })

  it.each([
    ['http://x', { host: 'x', port: 80 }],
    ['https://x', { host: 'x', port: 443 }],
    ['ftp://x', undefined],
  ])('url - %s', (text, expected) => {
    expect(urlTarget(text)).toEqual(expected)
  })

  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['10.0.0.1', false],
    ['api.anthropic.com', false],
  ])('loopback - %s: %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected)
  })

  it('allowed - host and port must both match', () => {
    const targets = [{ host: '127.0.0.1', port: 41234 }]
    expect(isAllowed(targets, '127.0.0.1', 41234)).toBe(true)
    expect(isAllowed(targets, '127.0.0.1', 4222)).toBe(false)
    expect(isAllowed(targets, 'localhost', 41234)).toBe(false)
  })

  it.each([
    ['CONNECT api.anthropic.com:443 HTTP/1.1', { target: { host: 'api.anthropic.com', port: 443 }, connect: true }],
    ['GET http://127.0.0.1:8080/v1/messages HTTP/1.1', { target: { host: '127.0.0.1', port: 8080 }, connect: false }],
    ['CONNECT api.anthropic.com HTTP/1.1', undefined],
    ['GET /v1/messages HTTP/1.1', undefined],
    ['garbage', undefined],
  ])('request line - %s', (line, expected) => {
    expect(parseRequestLine(line)).toEqual(expected)
  })
})
