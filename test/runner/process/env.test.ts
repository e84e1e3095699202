import { describe, expect, it } from 'vitest'
import { buildEnv, SESSION_TAG_VAR } from '../../../runner/process/env.ts'

describe('agent environment', () => {
  it('env - drops the deny list, adds engine.env and the tag', () => {
    const env = buildEnv(
      { PATH: '/bin', HOME: '/h', LD_PRELOAD: 'evil.so', NODE_OPTIONS: '--require x', SERVICE_API_KEY: 'secret', KEEP: '1' },
      { ANTHROPIC_BASE_URL: 'http://x', KEEP: '2' },
      'tag-1',
    )
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', KEEP: '2', ANTHROPIC_BASE_URL: 'http://x', [SESSION_TAG_VAR]: 'tag-1' })
  })
})
