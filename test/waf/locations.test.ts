import { describe, expect, it } from 'vitest'
import { normalizePath, urlForms } from '../../waf/locations.ts'

describe('waf locations', () => {
  it.each([
    { raw: '$HOME/.ssh/id_rsa', out: '~/.ssh/id_rsa' },
    { raw: '${HOME}/.aws/credentials', out: '~/.aws/credentials' },
    { raw: '/home/me/.ssh/id_rsa', home: '/home/me', out: '~/.ssh/id_rsa' },
    { raw: '/home/me', home: '/home/me/', out: '~' },
    { raw: '/home/meow/x', home: '/home/me', out: '/home/meow/x' },
    { raw: '/work/../etc//shadow', out: '/etc/shadow' },
    { raw: 'src/./a/../b.ts', out: 'src/b.ts' },
    { raw: '/etc/cron.d/', out: '/etc/cron.d' },
    { raw: '/', out: '/' },
  ])('path - $raw', ({ raw, home, out }) => {
    expect(normalizePath(raw, home === undefined ? {} : { home })).toBe(out)
  })

  it.each([
    { raw: 'http://2852039166/latest', forms: ['http://2852039166/latest', 'http://169.254.169.254/latest'] },
    { raw: 'http://0xa9.0xfe.0xa9.0xfe/', forms: ['http://0xa9.0xfe.0xa9.0xfe/', 'http://169.254.169.254/'] },
    { raw: 'http://[::ffff:169.254.169.254]/', forms: ['http://[::ffff:169.254.169.254]/', 'http://[::ffff:a9fe:a9fe]/'] },
    { raw: 'https://api.github.com/repos/a/b?x=1', forms: ['https://api.github.com/repos/a/b?x=1'] },
    { raw: 'not a url', forms: ['not a url'] },
  ])('url - $raw', ({ raw, forms }) => {
    expect(urlForms(raw)).toEqual(forms)
  })
})
