import type { Logger } from 'pino'
import type { OtelConfig } from './config.ts'
import type { Tracing, TracingResource } from './spans.ts'

/** Starts tracing when `otel.endpoint` is set; undefined (and nothing loaded) otherwise. */
export async function startTracing(config: OtelConfig, resource: TracingResource, log: Logger): Promise<Tracing | undefined> {
  if (config.endpoint === undefined) return undefined
  const { startOtel } = await import('./otel.ts')
  return startOtel({ ...config, endpoint: config.endpoint }, resource, log)
}
