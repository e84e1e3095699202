import { describe, expect, it } from 'vitest'
import { ConfigError, engineList, loadConfig, resolveConfig } from '../../../service/config/mod.ts'
import { configFile } from '../../fixtures/config-file.ts'

describe('config', () => {
  it('config - defaults need no file', async () => {
    const config = await loadConfig(undefined, {})
    expect(config.server.port).toBe(8080)
    expect(engineList(config)).toMatchObject({ default: 'claude', engines: [{ name: 'claude', type: 'claude', command: 'claude' }] })
    expect(config.engine.timeout).toBe(300_000)
    expect(config.engine.idle_timeout).toBe(1_800_000)
    expect(config.nats.url).toBe('nats://127.0.0.1:4222')
  })

  it('config - `engines` lists named engines; `engine.default` picks the one a session runs when it names none', async () => {
    const file = await configFile(`
engine: { default: gemini, timeout: 90s }
engines:
  - { name: claude, type: claude, command: /opt/claude }
  - { name: gemini, type: claude, command: /opt/gemini, args: [--acp], env: { HOME: /srv/gemini }, network_allow: ["generativelanguage.googleapis.com:443"] }
`)
    const config = await loadConfig(file, {})
    expect(engineList(config)).toMatchObject({
      default: 'gemini',
      engines: [
        { name: 'claude', command: '/opt/claude', args: [] },
        { name: 'gemini', command: '/opt/gemini', args: ['--acp'], env: { HOME: '/srv/gemini' }, network_allow: ['generativelanguage.googleapis.com:443'] },
      ],
    })
    expect(config.engine.timeout).toBe(90_000)
  })

  it.each([
    [
      'engine.command beside engines',
      'engine: { command: /opt/claude }\nengines: [{ name: a, type: claude, command: a }]',
      'engine.command: engine.command describes the one engine of a config without `engines`',
    ],
    [
      'a default that names no engine',
      'engine: { default: b }\nengines: [{ name: a, type: claude, command: a }]',
      'engine.default: engine.default "b" names no engine (configured: a)',
    ],
    [
      'two engines of one name',
      'engines: [{ name: a, type: claude, command: a }, { name: a, type: claude, command: b }]',
      'engines.1.name: the engine name "a" is used twice',
    ],
  ])('config - %s is refused, naming the key', async (_name, text, message) => {
    await expect(loadConfig(await configFile(text), {})).rejects.toThrow(message)
  })

  it('config - reads every key of the file', async () => {
    const file = await configFile(`
server: { port: 9090 }
engine:
  command: /opt/claude
  args: [--debug]
  env: { FOO: bar }
  permission_mode: acceptEdits
  allowed_tools: [Bash, Read]
  disallowed_tools: [WebFetch]
  timeout: 90s
  idle_timeout: 1h
session: { work_dir: /srv/sandboxes, marker_dir: /srv/markers }
nats: { url: "nats://nats:4222" }
`)
    const config = await loadConfig(file, {})
    expect(config.server.port).toBe(9090)
    expect(config.engine).toMatchObject({
      command: '/opt/claude',
      args: ['--debug'],
      env: { FOO: 'bar' },
      permission_mode: 'acceptEdits',
      allowed_tools: ['Bash', 'Read'],
      disallowed_tools: ['WebFetch'],
      timeout: 90_000,
      idle_timeout: 3_600_000,
    })
    expect(config.session).toMatchObject({ work_dir: '/srv/sandboxes', marker_dir: '/srv/markers' })
    expect(config.nats.url).toBe('nats://nats:4222')
  })

  it('config - NATS credentials come from the environment (they are secrets)', () => {
    const config = resolveConfig({}, { NATS_USER: 'svc', NATS_PASSWORD: 'pw' })
    expect(config.nats).toMatchObject({ user: 'svc', password: 'pw' })
    expect(resolveConfig({}, { NATS_TOKEN: 't' }).nats.token).toBe('t')
    expect(resolveConfig({}, { NATS_CREDS: '/etc/nats/runner.creds' }).nats.creds_file).toBe('/etc/nats/runner.creds')
  })

  it('config - the environment wins over the file', () => {
    const config = resolveConfig({ server: { port: 1 }, nats: { url: 'nats://a:1' } }, { SERVICE_PORT: '7070', NATS_URL: 'nats://b:2' })
    expect(config.server.port).toBe(7070)
    expect(config.nats.url).toBe('nats://b:2')
  })

  it.each([
    [{ engine: { timeout: '5x' } }, 'engine.timeout'],
    [{ engine: { bogus: 1 } }, 'engine.bogus: unknown key'],
    [{ server: { port: 'eighty' } }, 'server.port'],
    [{ server: { port: 70000 } }, 'server.port'],
    [{ session: { work_dir: 3 } }, 'session.work_dir'],
    [{ engine: { permission_mode: 'yolo' } }, 'engine.permission_mode'],
    [{ engine: { args: 'x' } }, 'engine.args'],
    [{ nope: {} }, 'nope: unknown key'],
    [{ nats: { user: 'svc' } }, 'nats.password: nats.user and nats.password go together'],
    [{ nats: { password: 'p' } }, 'nats.user: nats.user and nats.password go together'],
    [{ nats: { user: 'svc', password: 'p', token: 't' } }, 'nats.token: choose one way to authenticate to NATS, not user and token'],
    [{ nats: { token: 't', creds_file: '/x.creds' } }, 'nats.creds_file'],
  ])('config - %j is rejected naming %s', (doc, key) => {
    expect(() => resolveConfig(doc, {})).toThrow(ConfigError)
    expect(() => resolveConfig(doc, {})).toThrow(key)
  })

  it('config - a YAML number 0 is a duration of 0 (off), as "0" is', async () => {
    const file = await configFile('engine:\n  timeout: 0\n  idle_timeout: 0\nstate:\n  event_max_age: 0\n')
    const config = await loadConfig(file, {})
    expect(config.engine.timeout).toBe(0)
    expect(config.engine.idle_timeout).toBe(0)
  })

  it('config - a bare number other than 0 as a duration is refused, naming the key and the fix', async () => {
    const file = await configFile('engine:\n  timeout: 300\n')
    const err = (await loadConfig(file, {}).catch((e: unknown) => e)) as ConfigError
    expect(err).toBeInstanceOf(ConfigError)
    expect(err.message).toContain('engine.timeout')
    expect(err.message).toContain('"300s" or "300ms"')
  })

  it('config - a non-integer SERVICE_PORT is rejected', () => {
    expect(() => resolveConfig({}, { SERVICE_PORT: '80a' })).toThrow('SERVICE_PORT')
  })

  it('config - a file that is not a mapping is rejected', async () => {
    await expect(loadConfig(await configFile('- a\n- b\n'), {})).rejects.toThrow(ConfigError)
    await expect(loadConfig(await configFile('server: [\n'), {})).rejects.toThrow('not valid YAML')
    await expect(loadConfig('/nonexistent/config.yaml', {})).rejects.toThrow('cannot read')
  })
})
