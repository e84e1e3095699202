import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'

/**
 * A gateway as the chart runs it (`server.readiness: bus`): in Kubernetes the
 * controller makes runner pods on demand, so a gateway must be ready with no
 * runner at all (warm pool 0), else no session would ever ask for a pod.
 */
describe('gateway readiness in Kubernetes (server.readiness: bus)', () => {
  let nats: Required<NatsFixture>
  let gateway: Stack
  const prefix = `kready-${process.pid}-${Date.now()}`

  beforeAll(async () => {
    nats = await startPrivateNats()
    gateway = await startStack({ nats: { url: nats.url, prefix }, server: { readiness: 'bus' } }, 'gateway')
  })
  afterAll(async () => {
    await gateway?.close()
    await nats?.stop()
  })

  const ready = async () => {
    const response = await fetch(`${gateway.url}/health/ready`)
    return { status: response.status, body: await response.json() }
  }

  it('ready with NATS connected and no runner; the runner checks are still shown', async () => {
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready', checks: { bus: true, engine: false, pool: false } } })
  })

  it('not ready while NATS is down, ready again once it is back', async () => {
    // Longer than a passing result is cached (5 s).
    const restarted = nats.restart({ downMs: 9_000 })
    await vi.waitFor(
      async () => expect(await ready()).toEqual({ status: 503, body: { status: 'not_ready', checks: { bus: false, engine: false, pool: false } } }),
      { timeout: 9_000, interval: 100 },
    )
    await restarted
    await vi.waitFor(async () => expect((await ready()).status).toBe(200), { timeout: 15_000, interval: 200 })
  })
})
