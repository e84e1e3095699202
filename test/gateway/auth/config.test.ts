import { describe, expect, it } from 'vitest'
import { ConfigError, resolveConfig } from '../../../config/mod.ts'
import { configuredKeys } from '../../../gateway/auth/config.ts'

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
})
