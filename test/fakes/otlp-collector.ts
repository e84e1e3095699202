/**
 * A fake OpenTelemetry collector for tests: OTLP/HTTP with JSON bodies
 * (`POST /v1/traces`, gzip or plain), as the service's exporter sends them.
 * It keeps every span, flattened with its resource's `service.name`.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
interface KeyValue {
  key: string
  value: AnyValue
}

/** One received span. */
export interface CollectedSpan {
  traceId: string
  spanId: string
  /** Empty for a root span. */
  parentSpanId: string
  name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, string | number | boolean>
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string }
  /** The resource's attributes (`service.name`, …). */
  resource: Record<string, string | number | boolean>
}

export interface FakeCollector {
  /** `host:port`, as OTEL_ENDPOINT takes it. */
  endpoint: string
  spans: CollectedSpan[]
  /** Export requests received (any path). */
  requests: { path: string; contentType: string | undefined }[]
  /** Resolves once a span matching `match` arrived. */
  waitFor(match: (span: CollectedSpan) => boolean, timeoutMs?: number): Promise<CollectedSpan>
  stop(): Promise<void>
}

export async function startFakeCollector(): Promise<FakeCollector> {
  const spans: CollectedSpan[] = []
  const requests: FakeCollector['requests'] = []
  let waiters: { match: (span: CollectedSpan) => boolean; resolve: (span: CollectedSpan) => void }[] = []

  const server = createServer(async (req, res) => {
    requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] })
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end()
      return
    }
    let body = await readBody(req)
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
    if (!String(req.headers['content-type']).startsWith('application/json')) {
      res.writeHead(415).end()
      return
    }
    for (const span of flatten(JSON.parse(body.toString('utf8')))) {
      spans.push(span)
      waiters = waiters.filter((waiter) => {
        if (!waiter.match(span)) return true
        waiter.resolve(span)
        return false
      })
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    endpoint: `127.0.0.1:${port}`,
    spans,
    requests,
    waitFor(match, timeoutMs = 10_000) {
      const seen = spans.find(match)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`fake collector: no matching span within ${timeoutMs} ms; have ${spans.map((s) => s.name).join(', ')}`)),
          timeoutMs,
        )
        waiters.push({
          match,
          resolve: (span) => {
            clearTimeout(timer)
            resolve(span)
          },
        })
      })
    },
    async stop() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: {
      spans?: (Omit<CollectedSpan, 'attributes' | 'resource' | 'status' | 'parentSpanId'> & {
        attributes?: KeyValue[]
        parentSpanId?: string
        status?: { code?: number; message?: string }
      })[]
    }[]
  }[]
}

function flatten(request: ExportRequest): CollectedSpan[] {
  const out: CollectedSpan[] = []
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes)
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributes(span.attributes),
          status: { code: span.status?.code ?? 0, ...(span.status?.message && { message: span.status.message }) },
          resource,
        })
      }
    }
  }
  return out
}

function attributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue
    else if (value.intValue !== undefined) out[key] = Number(value.intValue)
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue
    else if (value.boolValue !== undefined) out[key] = value.boolValue
  }
  return out
}
