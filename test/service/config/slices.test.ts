import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../../service/config/mod.ts'
import { observabilitySettings, securityOptions, stateSettings } from '../../../service/config/slices.ts'

describe('config slices - each part gets its own settings', () => {
  it('server config - securityOptions hands the gateway the auth and limits sections and the periods', () => {
    const config = resolveConfig({ server: { host: '0.0.0.0', ping_interval: '5s', task_pulse: '7s' } }, { SERVICE_API_KEY: 'k-123' })
    expect(securityOptions(config)).toEqual({
      auth: config.auth,
      limits: config.limits,
      pingIntervalMs: 5_000,
      taskPulseMs: 7_000,
      http: { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000 },
      host: '0.0.0.0',
      wsDialect: 'native',
    })
    expect(config.auth.api_key).toEqual(['k-123'])
  })

  it('config slices - stateSettings: the state section without its backend, the subject prefix and the durable dir', () => {
    const config = resolveConfig(
      { nats: { prefix: 'p1' }, session: { marker_dir: '/m' }, state: { backend: 'memory', storage: 'memory', lease_ttl: '3s' } },
      {},
    )
    expect(stateSettings(config)).toEqual({
      storage: 'memory',
      replicas: 1,
      event_max_age: 86_400_000,
      events_per_session: 10_000,
      event_max_bytes: -1,
      lease_ttl: 3_000,
      prefix: 'p1',
      durable_dir: '/m',
    })
  })

  it('config slices - observabilitySettings: namespace, prefix, otel and the runner server', () => {
    const cases = [
      { raw: {}, expected: { namespace: 'default', subjectPrefix: 'agent-runtime', httpPort: undefined, host: '127.0.0.1', readiness: 'runner' } },
      {
        raw: { namespace: 'n', nats: { prefix: 'p' }, runner: { http_port: 9090 }, server: { host: '0.0.0.0', readiness: 'bus' } },
        expected: { namespace: 'n', subjectPrefix: 'p', httpPort: 9090, host: '0.0.0.0', readiness: 'bus' },
      },
    ]
    for (const { raw, expected } of cases) {
      const config = resolveConfig(raw, {})
      expect(observabilitySettings(config)).toEqual({ ...expected, otel: config.otel })
    }
  })
})
