import { describe, expect, it } from 'vitest'
import { buildEnv, envAllowed, SESSION_TAG_VAR } from '../../../runner/process/env.ts'

describe('agent environment', () => {
  it('env - keeps only the allowlist of the service environment, adds engine.env and the tag', () => {
    const env = buildEnv(
      {
        PATH: '/bin',
        HOME: '/h',
        LANG: 'C.UTF-8',
        LC_ALL: 'C',
        ANTHROPIC_API_KEY: 'k',
        CLAUDE_CODE_MAX_RETRIES: '1',
        LD_PRELOAD: 'evil.so',
        NODE_OPTIONS: '--require x',
        SERVICE_API_KEY: 'secret',
        NATS_TOKEN: 't',
        NATS_URL: 'nats://x',
        KEEP: '1',
      },
      { ANTHROPIC_BASE_URL: 'http://x', KEEP: '2' },
      'tag-1',
    )
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/h',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      ANTHROPIC_API_KEY: 'k',
      CLAUDE_CODE_MAX_RETRIES: '1',
      KEEP: '2',
      ANTHROPIC_BASE_URL: 'http://x',
      [SESSION_TAG_VAR]: 'tag-1',
    })
  })

  it.each([
    ['PATH', true],
    ['LC_CTYPE', true],
    ['ANTHROPIC_BASE_URL', true],
    ['CLAUDE_CONFIG_DIR', true],
    ['TZ', true],
    ['NATS_PASSWORD', false],
    ['NATS_CREDS', false],
    ['SERVICE_CHAT_BOT_TOKEN', false],
    ['AWS_SECRET_ACCESS_KEY', false],
    ['GITHUB_TOKEN', false],
    ['LD_PRELOAD', false],
    ['NODE_OPTIONS', false],
  ])('allowed - %s: %s', (name, expected) => {
    expect(envAllowed(name)).toBe(expected)
  })
})
