import { describe, expect, it } from 'vitest'
import { ConfigError, resolveConfig } from '../../../service/config/mod.ts'
import { configuredKeys, tenancyEnabled, tenantKeys } from '../../../gateway/auth/config.ts'

describe('auth config - keys and origins from file and environment', () => {
  it('auth config - defaults: no keys, no browser origin', () => {
    const config = resolveConfig({}, {})
    expect(configuredKeys(config.auth)).toEqual([])
    expect(config.auth.allowed_origins).toEqual([])
  })

  it('auth config - SERVICE_API_KEY and comma-separated SERVICE_API_KEYS are all accepted', () => {
    const config = resolveConfig({}, { SERVICE_API_KEY: 'single-key', SERVICE_API_KEYS: ' new-key , old-key,,' })
    expect(configuredKeys(config.auth)).toEqual(['single-key', 'new-key', 'old-key'])
  })

  it('auth config - keys from the file; the environment replaces the file list', () => {
    expect(configuredKeys(resolveConfig({ auth: { api_keys: ['a1', 'a2'] } }, {}).auth)).toEqual(['a1', 'a2'])
    expect(configuredKeys(resolveConfig({ auth: { api_keys: ['a1'] } }, { SERVICE_API_KEYS: 'b1' }).auth)).toEqual(['b1'])
  })

  it('auth config - SERVICE_ALLOWED_ORIGINS is normalized', () => {
    const config = resolveConfig({}, { SERVICE_ALLOWED_ORIGINS: 'https://App.example.com:443, http://localhost:3000' })
    expect(config.auth.allowed_origins).toEqual(['https://app.example.com', 'http://localhost:3000'])
  })

  it('auth config - a key with a space and a path as origin are refused naming the key', () => {
    expect(() => resolveConfig({ auth: { api_keys: ['has space'] } }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ auth: { api_keys: ['has space'] } }, {})).toThrow(/auth\.api_keys\.0/)
    expect(() => resolveConfig({}, { SERVICE_ALLOWED_ORIGINS: 'https://x.example/app' })).toThrow(/auth\.allowed_origins\.0/)
  })

  it('auth config - tenants: each with its keys; the plain keys are the tenant default', () => {
    const config = resolveConfig(
      {
        auth: {
          tenants: [
            { id: 'acme', keys: ['a1', 'a2'] },
            { id: 'globex', keys: 'g1' },
          ],
        },
      },
      { SERVICE_API_KEY: 'plain' },
    )
    expect(tenantKeys(config.auth)).toEqual([
      { key: 'plain', tenant: 'default' },
      { key: 'a1', tenant: 'acme' },
      { key: 'a2', tenant: 'acme' },
      { key: 'g1', tenant: 'globex' },
    ])
    expect(configuredKeys(config.auth)).toEqual(['plain', 'a1', 'a2', 'g1'])
    expect(tenancyEnabled(config.auth)).toBe(true)
    expect(tenancyEnabled(resolveConfig({}, { SERVICE_API_KEYS: 'k1,k2' }).auth)).toBe(false)
  })

  const refused: [string, Record<string, unknown>, Record<string, string>, RegExp][] = [
    [
      'a key of two tenants',
      {
        tenants: [
          { id: 'acme', keys: ['k'] },
          { id: 'globex', keys: ['k'] },
        ],
      },
      {},
      /auth\.tenants\.1\.keys\.0: .*tenant "acme"/,
    ],
    [
      'a tenant key that is also a plain key',
      { tenants: [{ id: 'acme', keys: ['k'] }] },
      { SERVICE_API_KEY: 'k' },
      /auth\.tenants\.0\.keys\.0: .*tenant "default"/,
    ],
    [
      'a tenant listed twice',
      {
        tenants: [
          { id: 'acme', keys: ['a'] },
          { id: 'acme', keys: ['b'] },
        ],
      },
      {},
      /auth\.tenants\.1\.id/,
    ],
    ['the id default beside plain keys', { tenants: [{ id: 'default', keys: ['a'] }] }, { SERVICE_API_KEY: 'k' }, /auth\.tenants\.0\.id/],
    ['a tenant without keys', { tenants: [{ id: 'acme', keys: [] }] }, {}, /auth\.tenants\.0\.keys/],
    ['a tenant id with a space', { tenants: [{ id: 'ac me', keys: ['a'] }] }, {}, /auth\.tenants\.0\.id/],
  ]
  for (const [name, auth, env, message] of refused) {
    it(`auth config - refused: ${name}`, () => {
      expect(() => resolveConfig({ auth }, env)).toThrow(ConfigError)
      expect(() => resolveConfig({ auth }, env)).toThrow(message)
    })
  }
})
