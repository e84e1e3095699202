import os from 'node:os'
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  ROOT_CONTEXT,
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace'
import type { Logger } from 'pino'
import type { Headers } from '../bus/mod.ts'
import type { OtelConfig } from './config.ts'
import { tracesUrl, type SpanHandle, type SpanKind, type SpanOptions, type Tracing, type TracingResource } from './spans.ts'

/**
 * Tracing with the OpenTelemetry Node SDK and the OTLP/HTTP (JSON) exporter.
 * Loaded only when `otel.endpoint` is set (see tracing.ts).
 *
 * The SDK registers process-wide globals (tracer provider, context manager,
 * propagator), so one SDK serves every service of the process: the first
 * start creates it, the last shutdown flushes it and unregisters the globals,
 * so a later service can start its own.
 */

/** Longest wait for the last spans to reach the collector when the service stops. */
const SHUTDOWN_TIMEOUT_MS = 3_000

interface SharedSdk {
  sdk: NodeSDK
  url: string
  users: number
}

let shared: SharedSdk | undefined

const KINDS: Record<SpanKind, OtelSpanKind> = {
  internal: OtelSpanKind.INTERNAL,
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
  producer: OtelSpanKind.PRODUCER,
  consumer: OtelSpanKind.CONSUMER,
}

class OtelSpan implements SpanHandle {
  readonly span: Span
  constructor(span: Span) {
    this.span = span
  }
  get traceId(): string {
    return this.span.spanContext().traceId
  }
  headers(): Headers {
    const carrier: Headers = {}
    propagation.inject(trace.setSpan(ROOT_CONTEXT, this.span), carrier)
    return carrier
  }
  setAttributes(attributes: Record<string, string | number | boolean>): void {
    this.span.setAttributes(attributes)
  }
  fail(code: string, message: string): void {
    this.span.setAttribute('error.code', code)
    this.span.setStatus({ code: SpanStatusCode.ERROR, message })
  }
  end(): void {
    this.span.end()
  }
}

export function startOtel(config: OtelConfig & { endpoint: string }, resource: TracingResource, log: Logger): Tracing {
  const url = tracesUrl(config.endpoint)
  if (shared) {
    shared.users++
    if (shared.url !== url) log.warn({ url, in_use: shared.url }, 'tracing: this process already exports to another collector; using that one')
  } else {
    diag.setLogger(diagLogger(log.child({ component: 'otel' })), DiagLogLevel.WARN)
    const sdk = new NodeSDK({
      serviceName: config.service_name,
      traceExporter: new OTLPTraceExporter({ url }),
      // A runner follows the sampling decision the gateway made for the trace.
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampling_rate) }),
      resourceDetectors: [
        {
          detect: () => ({
            attributes: {
              'service.version': resource.version,
              'service.namespace': resource.namespace,
              'service.instance.id': `${os.hostname()}-${process.pid}`,
              'agent_runtime.mode': resource.mode,
            },
          }),
        },
      ],
      // Traces only: no instrumentations, no metric or log export (metrics are Prometheus, logs are stdout).
      instrumentations: [],
      metricReaders: [],
      logRecordProcessors: [],
    })
    sdk.start()
    shared = { sdk, url, users: 1 }
    log.info({ url, sampling_rate: config.sampling_rate, service_name: config.service_name }, 'tracing to an OTLP collector')
  }
  const tracer = trace.getTracer('agent-runtime', resource.version)
  let stopped = false
  return {
    startSpan(name: string, options: SpanOptions): SpanHandle {
      const span = tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: options.attributes }, parentContext(options.parent))
      return new OtelSpan(span)
    },
    async shutdown() {
      if (stopped || !shared) return
      stopped = true
      if (--shared.users > 0) return
      const { sdk } = shared
      shared = undefined
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), SHUTDOWN_TIMEOUT_MS)))
      const result = await Promise.race([sdk.shutdown().catch((err: unknown) => err), timedOut])
      clearTimeout(timer)
      if (result === 'timeout') log.warn({ url }, 'tracing: the collector did not take the last spans in time')
      else if (result instanceof Error) log.warn({ err: result, url }, 'tracing: exporting the last spans failed')
      trace.disable()
      context.disable()
      propagation.disable()
      diag.disable()
    },
  }
}

function parentContext(parent: SpanHandle | Headers | undefined): Context {
  if (parent === undefined) return ROOT_CONTEXT
  if (parent instanceof OtelSpan) return trace.setSpan(ROOT_CONTEXT, parent.span)
  if (isHeaders(parent)) return propagation.extract(ROOT_CONTEXT, parent)
  return ROOT_CONTEXT
}

function isHeaders(value: SpanHandle | Headers): value is Headers {
  return typeof (value as SpanHandle).headers !== 'function'
}

/** OpenTelemetry's own complaints (an unreachable collector, say) as warnings in the service log. */
function diagLogger(log: Logger) {
  const warn = (message: string, ...args: unknown[]) => log.warn({ detail: args.map(String).join(' ') || undefined }, `otel: ${message}`)
  const ignore = () => {}
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore }
}
