import { afterEach, describe, expect, it } from 'vitest'
import { SERVICE_VERSION } from '../../contract/version.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { bwrapWorks } from '../fixtures/escape-corpus.ts'

/** The session sandbox that `sandbox.mode: auto` gives on this machine. */
const SANDBOX = bwrapWorks ? 'bwrap' : 'none'

/** GET /health, /health/live and /health/ready through the running service (dev mode, fake CLI). */
describe('health', () => {
  let stack: Stack | undefined
  afterEach(async () => {
    await stack?.close()
    stack = undefined
  })
  const get = async (path: string) => {
    const response = await fetch(stack!.url + path)
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it('health - healthy with the service version and the uptime as a duration; live says alive', async () => {
    stack = await startStack()
    const health = await get('/health')
    expect(health).toMatchObject({ status: 200, body: { status: 'healthy', version: SERVICE_VERSION } })
    expect(health.body.uptime).toMatch(/^(\d+h)?(\d+m)?\d+s$/)
    expect(await get('/health/live')).toEqual({ status: 200, body: { status: 'alive' } })
  })

  it('ready - 200 with engine and pool true when the runner is up and its CLI answers --version', async () => {
    stack = await startStack()
    expect(await get('/health/ready')).toEqual({ status: 200, body: { status: 'ready', checks: { engine: true, pool: true }, sandbox: SANDBOX } })
  })

  it('ready - 503 with engine false when the configured CLI cannot be found; the process stays live', async () => {
    stack = await startStack({ engine: { command: '/nonexistent/claude', args: [] } })
    expect(await get('/health/ready')).toEqual({ status: 503, body: { status: 'not_ready', checks: { engine: false, pool: true }, sandbox: SANDBOX } })
    expect((await get('/health/live')).status).toBe(200)
    expect((await get('/health')).status).toBe(200)
  })

  it('ready - 503 "draining" as soon as the service drains, while health and live stay 200', async () => {
    stack = await startStack()
    expect((await get('/health/ready')).status).toBe(200)
    stack.service.lifecycle!.drain()
    expect(await get('/health/ready')).toEqual({ status: 503, body: { status: 'draining', checks: { engine: true, pool: true }, sandbox: SANDBOX } })
    expect((await get('/health')).status).toBe(200)
    expect((await get('/health/live')).status).toBe(200)
  })

  it('probes - open without an API key when keys are configured; /metrics is not', async () => {
    stack = await startStack({ auth: { api_key: 'probe-test-key-123456' } })
    for (const path of ['/health', '/health/live', '/health/ready']) expect((await get(path)).status).toBe(200)
    expect((await fetch(`${stack.url}/metrics`)).status).toBe(401)
    const withKey = await fetch(`${stack.url}/metrics`, { headers: { authorization: 'Bearer probe-test-key-123456' } })
    expect(withKey.status).toBe(200)
    expect(withKey.headers.get('content-type')).toMatch(/^text\/plain/)
  })
})
