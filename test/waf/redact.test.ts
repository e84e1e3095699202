import { describe, expect, it } from 'vitest'
import { excerpt, MAX_EXCERPT_CHARS } from '../../waf/redact.ts'

describe('waf redact', () => {
  it.each([
    { text: 'curl -d "password=hunter2hunter2" x', out: 'curl -d "password=[REDACTED]" x' },
    { text: 'export AWS_SECRET_ACCESS_KEY=abcdEFGH1234', out: 'export AWS_SECRET_ACCESS_KEY=[REDACTED]' },
    { text: 'tool --api-key sk-ant-abcdefghijklmnopqrstuvwx', out: 'tool --api-key [REDACTED]' },
    { text: 'key AKIAABCDEFGHIJKLMNOP here', out: 'key [REDACTED] here' },
    { text: 'curl -H "Authorization: Bearer abcdefghijklmnop123"', out: 'curl -H "Authorization: [REDACTED]"' },
    { text: 'gh auth ghp_abcdefghijklmnopqrstuvwxyz0123', out: 'gh auth [REDACTED]' },
    { text: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----', out: '[REDACTED]' },
    { text: 'rm -rf /', out: 'rm -rf /' },
    { text: 'reset the password flow', out: 'reset the password flow' },
  ])('redact - $text', ({ text, out }) => {
    expect(excerpt(text)).toBe(out)
  })

  it('redact - long excerpts are cut', () => {
    const out = excerpt('x'.repeat(1000))
    expect(out).toHaveLength(MAX_EXCERPT_CHARS)
    expect(out.endsWith('…')).toBe(true)
  })
})
