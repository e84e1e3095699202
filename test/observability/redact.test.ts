import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../service/config/mod.ts'
import { LOG_REDACT_PATHS, REDACTED, redactApiKeyParams, scrubber, secretsOf } from '../../observability/redact.ts'

/** A pino logger set up as service/logger.ts sets it up, writing into an array. */
function logger(secrets: string[] = []) {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const scrub = scrubber(secrets)
  const log = pino({ redact: { paths: [...LOG_REDACT_PATHS], censor: REDACTED }, ...(scrub && { hooks: { streamWrite: scrub } }) }, stream)
  return { log, lines }
}

describe('redact', () => {
  it.each([
    ['a header', { headers: { authorization: 'Bearer abc123456' } }, 'abc123456'],
    ['a request header', { req: { headers: { 'x-api-key': 'key-123456' } } }, 'key-123456'],
    ['a config section', { config: { chat: { app_secret: 'sec-123456' } } }, 'sec-123456'],
    ['an environment dump', { env: { ANTHROPIC_API_KEY: 'sk-ant-123456' } }, 'sk-ant-123456'],
    ['a top-level field', { api_key: 'top-123456' }, 'top-123456'],
    ['the chat access token header', { headers: { 'x-acs-chat-access-token': 'tok-123456' } }, 'tok-123456'],
  ])('paths - %s is censored', (_what, fields, secret) => {
    const { log, lines } = logger()
    log.info(fields, 'hello')
    expect(lines.join('')).not.toContain(secret)
    expect(lines.join('')).toContain(REDACTED)
  })

  it('scrub - configured secret values are replaced anywhere in a line, also as JSON escapes them', () => {
    const { log, lines } = logger(['pa"ss\\word-1', 'plain-secret-2'])
    log.error({ err: new Error('cannot connect to nats://u:plain-secret-2@host') }, 'failed with pa"ss\\word-1 inside')
    const text = lines.join('')
    expect(text).not.toContain('plain-secret-2')
    expect(text).not.toContain('pa\\"ss\\\\word-1')
    expect(text.match(/\[REDACTED\]/g)?.length).toBeGreaterThanOrEqual(3) // message, err.message, err.stack
  })

  it('scrub - short values are never scrubbed', () => {
    expect(scrubber(['abc'])('x abc y')).toBe('x abc y')
    expect(scrubber(['abcdef'])('x abcdef y')).toBe(`x ${REDACTED} y`)
  })

  it.each([
    ['/v1/sessions/s/events?api_key=wrong-key-123', `/v1/sessions/s/events?api_key=${REDACTED}`],
    ['/global/event?directory=/w&api_key=k1&x=2', `/global/event?directory=/w&api_key=${REDACTED}&x=2`],
    ['{"url":"/event?API_KEY=abc"}', `{"url":"/event?API_KEY=${REDACTED}"}`],
    ['GET /ws/v1/agent?api_key=k#frag done', `GET /ws/v1/agent?api_key=${REDACTED}#frag done`],
    ['no parameter: my_api_key=1 stays', 'no parameter: my_api_key=1 stays'],
  ])('scrub - the api_key URL parameter is masked, configured or not: %s', (line, expected) => {
    expect(redactApiKeyParams(line)).toBe(expected)
    expect(scrubber([])(line)).toBe(expected)
  })

  it('secrets - API keys, chat secrets, secret-named engine.env and environment variables, the NATS password; not the chat app key', () => {
    const config = resolveConfig(
      {
        nats: { url: 'nats://agent:nats-pass-1234@127.0.0.1:4222' },
        engine: { env: { ANTHROPIC_AUTH_TOKEN: 'engine-token-1234', CLAUDE_CONFIG_DIR: '/some/where/long' } },
        chat: { enabled: true, app_key: 'public-app-key', app_secret: 'chat-secret-1234', callback_token: 'callback-tok-1234', api_url: 'http://127.0.0.1:1' },
      },
      { SERVICE_API_KEY: 'svc-key-1234', SERVICE_API_KEYS: 'svc-key-5678,svc-key-9012' },
    )
    const secrets = secretsOf(config, { ANTHROPIC_API_KEY: 'sk-ant-1234', GITHUB_TOKEN: 'ghp-123456', HOME: '/root/home', SHORT_TOKEN: 'x' })
    expect(secrets.sort()).toEqual(
      [
        'callback-tok-1234',
        'chat-secret-1234',
        'engine-token-1234',
        'ghp-123456',
        'nats-pass-1234',
        'sk-ant-1234',
        'svc-key-1234',
        'svc-key-5678',
        'svc-key-9012',
      ].sort(),
    )
  })
})
