/**
 * The testcontainers path, real: testcontainers-node drives podman through its
 * Docker API (the socket the global setup serves; Ryuk off, as podman has no
 * such reaper), with NATS and the project's runner image on one network.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { NATS_IMAGE, requireImages } from './podman.ts'

type Started = { stop(): Promise<unknown> }
const started: Started[] = []
let testcontainers: typeof import('testcontainers')

beforeAll(async () => {
  const build = requireImages()
  // Read by testcontainers when it first looks for a runtime: before its import.
  process.env.DOCKER_HOST = build.dockerHost
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true'
  process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1'
  testcontainers = await import('testcontainers')
}, 60_000)

afterAll(async () => {
  for (const s of started.reverse()) await s.stop().catch(() => {})
})

describe('images - testcontainers over podman', () => {
  test('NATS and the runner image on a network of their own: the runner connects by name and reports ready through a mapped port', async () => {
    const { GenericContainer, Network, Wait } = testcontainers
    const network = await new Network().start()
    started.push({ stop: () => network.stop() })
    const nats = await new GenericContainer(NATS_IMAGE)
      .withNetwork(network)
      .withNetworkAliases('nats')
      .withCommand(['-js', '-sd', '/tmp'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start()
    started.push(nats)
    const runner = await new GenericContainer('localhost/agent-runtime-runner:latest')
      .withNetwork(network)
      .withEnvironment({ NATS_URL: 'nats://nats:4222', RUNNER_ID: 'tc-runner', RUNNER_HTTP_PORT: '9090', SERVICE_HOST: '0.0.0.0' })
      .withExposedPorts(9090)
      .withWaitStrategy(Wait.forLogMessage(/agent runtime started/))
      .start()
    started.push(runner)
    const url = `http://${runner.getHost()}:${runner.getMappedPort(9090)}/health/ready`
    await vi.waitFor(async () => expect((await fetch(url)).status).toBe(200), { timeout: 20_000, interval: 250 })
    // pool: the runner's bus is connected, to the NATS container by its network alias.
    expect(await (await fetch(url)).json()).toMatchObject({ status: 'ready', checks: { engine: true, pool: true } })
  })
})
