import { describe, expect, it } from 'vitest'
import { ConfigError, resolveConfig } from '../../../service/config/mod.ts'

const ENABLED = { enabled: true, app_key: 'key', app_secret: 'secret', callback_token: 'cb', api_url: 'http://chat.test' }

function chat(section: Record<string, unknown>, env: Record<string, string> = {}) {
  return resolveConfig({ chat: section }, env).chat
}

function error(section: Record<string, unknown>, env: Record<string, string> = {}): string {
  try {
    chat(section, env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('expected a ConfigError')
}

describe('chat config', () => {
  it('chat config - off by default, nothing required', () => {
    expect(resolveConfig({}, {}).chat).toEqual({ enabled: false })
    expect(chat({ enabled: false, app_key: 'k' })).toEqual({ enabled: false })
  })

  it('chat config - defaults of an enabled section', () => {
    expect(chat(ENABLED)).toEqual({
      ...ENABLED,
      max_message_length: 5000,
      message_format: 'text',
      markdown_title: 'Agent reply',
      timestamp_window: 300_000,
      sweep_interval: 300_000,
      idle_timeout: 1_800_000,
      send_attempts: 4,
      retry_delay: 1000,
      turn_timeout: 900_000,
      request_timeout: 10_000,
      tenant: 'default',
    })
  })

  it('chat config - every key is read', () => {
    const settings = chat({
      ...ENABLED,
      callback_key: 'aes',
      max_message_length: 2000,
      system_prompt: 'Be brief.',
      message_format: 'markdown',
      markdown_title: 'Bot',
      timestamp_window: '1h',
      sweep_interval: '1m',
      idle_timeout: '10m',
      send_attempts: 2,
      retry_delay: '250ms',
      turn_timeout: '20m',
      request_timeout: '3s',
    })
    expect(settings).toMatchObject({
      callback_key: 'aes',
      max_message_length: 2000,
      system_prompt: 'Be brief.',
      message_format: 'markdown',
      markdown_title: 'Bot',
      timestamp_window: 3_600_000,
      sweep_interval: 60_000,
      idle_timeout: 600_000,
      send_attempts: 2,
      retry_delay: 250,
      turn_timeout: 1_200_000,
      request_timeout: 3000,
    })
  })

  it('chat config - missing values are named, each with how to set it', () => {
    const message = error({ enabled: true })
    expect(message).toContain('config: chat.app_key: required when chat.enabled is true')
    expect(message).toContain('chat.app_secret: required when chat.enabled is true (set chat.app_secret, chat.app_token or SERVICE_CHAT_APP_TOKEN)')
    expect(message).toContain('chat.callback_token: required when chat.enabled is true (set chat.callback_token, chat.bot_token or SERVICE_CHAT_BOT_TOKEN)')
    expect(message).toContain('chat.api_url: required when chat.enabled is true')
  })

  it('chat config - the environment tokens are the app secret and the callback token', () => {
    const settings = chat(
      { enabled: true, app_key: 'key', api_url: 'http://chat.test' },
      { SERVICE_CHAT_APP_TOKEN: 'env-secret', SERVICE_CHAT_BOT_TOKEN: 'env-cb' },
    )
    expect(settings).toMatchObject({ app_secret: 'env-secret', callback_token: 'env-cb' })
    expect(settings).not.toHaveProperty('app_token')
    expect(settings).not.toHaveProperty('bot_token')
  })

  it('chat config - app_token and bot_token win over app_secret and callback_token; the environment wins over both', () => {
    expect(chat({ ...ENABLED, app_token: 'file-token', bot_token: 'file-bot' })).toMatchObject({ app_secret: 'file-token', callback_token: 'file-bot' })
    expect(chat({ ...ENABLED, app_token: 'file-token' }, { SERVICE_CHAT_APP_TOKEN: 'env-token' })).toMatchObject({
      app_secret: 'env-token',
      callback_token: 'cb',
    })
  })

  it.each([
    [{ api_url: 'ftp://chat.test' }, 'chat.api_url'],
    [{ message_format: 'html' }, 'chat.message_format'],
    [{ max_message_length: 10 }, 'chat.max_message_length'],
    [{ sweep_interval: 'soon' }, 'chat.sweep_interval: invalid duration "soon"'],
    [{ idle_timeout: '0' }, 'chat.idle_timeout: invalid duration "0"'],
    [{ send_attempts: 0 }, 'chat.send_attempts'],
    [{ robot_code: 'x' }, 'chat.robot_code: unknown key'],
  ])('chat config - %j is rejected naming %s', (bad, named) => {
    expect(error({ ...ENABLED, ...bad })).toContain(named)
  })
})
