import type { Headers } from '../bus/mod.ts'

/**
 * Tracing as the service uses it: spans with attributes, a parent given as a
 * span or as W3C trace-context headers off the bus. OpenTelemetry stays
 * behind this interface, in otel.ts, which is imported only when
 * `otel.endpoint` is set: with tracing off no OpenTelemetry code is loaded.
 */

export type SpanAttributes = Record<string, string | number | boolean>

export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer'

/** A started span. */
export interface SpanHandle {
  readonly traceId: string
  /** Trace-context headers (`traceparent`, …) that make this span the parent of the receiver's spans. */
  headers(): Headers
  setAttributes(attributes: SpanAttributes): void
  /** Marks the span failed with an error code (attribute `error.code`) and message. */
  fail(code: string, message: string): void
  end(): void
}

export interface SpanOptions {
  attributes: SpanAttributes
  kind?: SpanKind
  /** A span of this process, or trace-context headers from another one. */
  parent?: SpanHandle | Headers | undefined
}

export interface Tracing {
  startSpan(name: string, options: SpanOptions): SpanHandle
  /** Exports what is pending and stops; spans started later are dropped. */
  shutdown(): Promise<void>
}

/** What the exported spans say about the process (resource attributes). */
export interface TracingResource {
  version: string
  namespace: string
  mode: string
}

/** The OTLP/HTTP traces URL of an `otel.endpoint`: `host:port` → `http://host:port/v1/traces`. */
export function tracesUrl(endpoint: string): string {
  const base = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`
  const url = new URL(base)
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces'
  return url.toString()
}
