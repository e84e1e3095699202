import { describe, expect, it } from 'vitest'
import { ConfigError, resolveConfig } from '../../service/config/mod.ts'

describe('observability config', () => {
  it('defaults - tracing off, runner and controller servers off, gateways ready with a runner', () => {
    const config = resolveConfig({}, {})
    expect(config.otel).toEqual({ service_name: 'agent-runtime', sampling_rate: 1 })
    expect(config.runner.http_port).toBeUndefined()
    expect(config.controller.http_port).toBeUndefined()
    expect(config.server.readiness).toBe('runner')
  })

  it('env - CONTROLLER_HTTP_PORT and SERVICE_READINESS win over the file', () => {
    const config = resolveConfig({ controller: { http_port: 1 }, server: { readiness: 'runner' } }, { CONTROLLER_HTTP_PORT: '8081', SERVICE_READINESS: 'bus' })
    expect(config.controller.http_port).toBe(8081)
    expect(config.server.readiness).toBe('bus')
  })

  it('env - OTEL_ENDPOINT, OTEL_SERVICE_NAME, OTEL_SAMPLING_RATE and RUNNER_HTTP_PORT win over the file', () => {
    const config = resolveConfig(
      { otel: { endpoint: 'file:4318', sampling_rate: 1 }, runner: { http_port: 1 } },
      { OTEL_ENDPOINT: 'collector:4318', OTEL_SERVICE_NAME: 'agents', OTEL_SAMPLING_RATE: '0.25', RUNNER_HTTP_PORT: '8081' },
    )
    expect(config.otel).toEqual({ endpoint: 'collector:4318', service_name: 'agents', sampling_rate: 0.25 })
    expect(config.runner.http_port).toBe(8081)
  })

  it.each([
    [{}, { OTEL_SAMPLING_RATE: '1.5' }, 'otel.sampling_rate'],
    [{}, { OTEL_SAMPLING_RATE: 'half' }, 'otel.sampling_rate'],
    [{ otel: { sampling_rate: -0.1 } }, {}, 'otel.sampling_rate'],
    [{ otel: { endpoint: '' } }, {}, 'otel.endpoint'],
    [{ otel: { exporter: 'grpc' } }, {}, 'otel.exporter: unknown key'],
    [{ runner: { http_port: 70_000 } }, {}, 'runner.http_port'],
    [{ controller: { http_port: -1 } }, {}, 'controller.http_port'],
    [{}, { CONTROLLER_HTTP_PORT: 'eighty' }, 'CONTROLLER_HTTP_PORT'],
    [{ server: { readiness: 'nats' } }, {}, 'server.readiness'],
    [{}, { SERVICE_READINESS: 'always' }, 'server.readiness'],
  ])('invalid - %j %j names %s', (doc, env, key) => {
    expect(() => resolveConfig(doc, env)).toThrow(ConfigError)
    expect(() => resolveConfig(doc, env)).toThrow(key)
  })
})
