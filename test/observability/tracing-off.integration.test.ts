import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const STACK = new URL('../fixtures/stack.ts', import.meta.url).href

/**
 * Starts a dev service in a fresh Node process that records every module it
 * loads (module.registerHooks), serves one request, stops, and prints the
 * OpenTelemetry modules and the tracing module it loaded.
 */
async function modulesLoaded(overrides: Record<string, Record<string, unknown>>): Promise<string[]> {
  const script = `
    import { registerHooks } from 'node:module'
    const seen = new Set()
    registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); seen.add(result.url); return result } })
    const { startStack } = await import(${JSON.stringify(STACK)})
    const stack = await startStack(${JSON.stringify(overrides)})
    const response = await fetch(stack.url + '/health/ready')
    if (response.status !== 200) throw new Error('not ready: ' + response.status)
    await stack.close()
    console.log(JSON.stringify([...seen].filter((url) => /@opentelemetry\\/(sdk-|exporter-)|observability\\/otel\\.ts/.test(url))))
  `
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 })
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as string[]
}

describe('tracing off', () => {
  it('cost - without otel.endpoint no OpenTelemetry SDK or exporter module is loaded', async () => {
    expect(await modulesLoaded({})).toEqual([])
  })

  it('cost - with otel.endpoint the SDK is loaded (the check above can see it)', async () => {
    const loaded = await modulesLoaded({ otel: { endpoint: '127.0.0.1:9' } })
    expect(loaded.some((url) => url.includes('@opentelemetry/sdk-node'))).toBe(true)
    expect(loaded.some((url) => url.includes('@opentelemetry/exporter-trace-otlp-http'))).toBe(true)
    expect(loaded.some((url) => url.endsWith('observability/otel.ts'))).toBe(true)
  })
})
