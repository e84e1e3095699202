import { describe, expect, it } from 'vitest'
import { ConfigError, resolveConfig } from '../../../service/config/mod.ts'

describe('server config - keep-alive, shutdown and limits', () => {
  it('server config - defaults: 30 s grace, pings and pulses', () => {
    const config = resolveConfig({}, {})
    expect(config.server).toMatchObject({ shutdown_grace: 30_000, ping_interval: 30_000, task_pulse: 30_000, request_timeout: 30_000, headers_timeout: 10_000 })
    expect(config.limits).toMatchObject({ max_body: 1024 * 1024, max_frame: 1024 * 1024, max_active_sessions: 0, rate: 0, burst: 50, retry_after: 5_000 })
    expect(config.limits).toMatchObject({ ws_send_buffer: 8 * 1024 * 1024, max_connections_per_ip: 1024 })
  })

  it('server config - durations, sizes and 0 for off', () => {
    const config = resolveConfig({ server: { shutdown_grace: '2m', ping_interval: '0', task_pulse: '10s' }, limits: { max_body: '256KiB', rate: 2.5 } }, {})
    expect(config.server).toMatchObject({ shutdown_grace: 120_000, ping_interval: 0, task_pulse: 10_000 })
    expect(config.limits).toMatchObject({ max_body: 256 * 1024, rate: 2.5 })
  })

  it('server config - a bad value names its key', () => {
    expect(() => resolveConfig({ server: { shutdown_grace: '30x' } }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ server: { shutdown_grace: '30x' } }, {})).toThrow(/server\.shutdown_grace/)
    expect(() => resolveConfig({ limits: { max_frame: 'huge' } }, {})).toThrow(/limits\.max_frame/)
    expect(() => resolveConfig({ limits: { rate: -1 } }, {})).toThrow(/limits\.rate/)
    expect(() => resolveConfig({ limits: { unknown: 1 } }, {})).toThrow(/limits\.unknown: unknown key/)
    expect(() => resolveConfig({ limits: { ws_send_buffer: '1KiB' } }, {})).toThrow(/limits\.ws_send_buffer/)
    expect(() => resolveConfig({ server: { headers_timeout: '0' } }, {})).toThrow(/server\.headers_timeout/)
  })
})
