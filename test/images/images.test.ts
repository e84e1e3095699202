/**
 * The images as a cluster would run them (scripts/images.sh build, podman,
 * locked down like the chart's pods): what each carries, the runner against
 * NATS, a session through the gateway and runner images with the real Claude
 * Code CLI of the runner image (against the fake model API), and the
 * controller image's probes (against the fake Kubernetes API).
 */
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { kubeConfigFor } from '../../controller/kube/connect.ts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.ts'
import { FakeKubeApi } from '../fakes/kube-api.ts'
import { freePort, startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { sample } from '../observability/prometheus.ts'
import { podman, requireImages, runContainer } from './podman.ts'

const KUBERNETES_CLIENT = '@kubernetes/client-node'
/** Writable folders of uid 10001 where the pod has emptyDirs (podman 4.3 ignores a tmpfs mode, so tmpfs would be root's). */
async function emptyDirs(names: string[]): Promise<string[]> {
  const flags = []
  for (const [name, target] of names.map((n) => [n, `/${n.replaceAll('-', '/')}`] as const)) {
    const folder = path.join(dir, `${name}-${Math.random().toString(36).slice(2)}`)
    await mkdir(folder)
    await chown(folder, 10001, 10001)
    flags.push('--volume', `${folder}:${target}`)
  }
  return flags
}

let nats: NatsFixture
let model: FakeAnthropic
let dir: string
const stops: (() => Promise<void>)[] = []

beforeAll(async () => {
  requireImages()
  nats = await startPrivateNats()
  model = await startFakeAnthropic()
  dir = await mkdtemp(path.join(os.tmpdir(), 'ar-images-'))
}, 60_000)

afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  await model?.stop()
  await nats?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function get(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url)
  const text = await response.text()
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text }
}

/** Polls `url` until it answers 200 (the container is up), or fails with the container's logs. */
async function answers(url: string, logs: () => Promise<string>): Promise<void> {
  try {
    await vi.waitFor(async () => expect((await get(url)).status).toBe(200), { timeout: 30_000, interval: 250 })
  } catch (err) {
    throw new Error(`${url} never answered 200: ${(err as Error).message}\n${await logs()}`)
  }
}

async function hasModule(image: string, name: string): Promise<boolean> {
  const out = await podman([
    'run',
    '--rm',
    '--network',
    'none',
    '--entrypoint',
    'node',
    image,
    '-e',
    `try { require.resolve(${JSON.stringify(name)}); console.log('yes') } catch { console.log('no') }`,
  ])
  return out.trim() === 'yes'
}

describe('images - built by scripts/images.sh, run by podman', () => {
  test('only the controller image carries the Kubernetes client; the gateway and runner images do not', async () => {
    expect(await hasModule('agent-runtime-controller', KUBERNETES_CLIENT)).toBe(true)
    expect(await hasModule('agent-runtime-gateway', KUBERNETES_CLIENT)).toBe(false)
    expect(await hasModule('agent-runtime-runner', KUBERNETES_CLIENT)).toBe(false)
    const size = async (image: string) => Number(await podman(['image', 'inspect', '--format', '{{.Size}}', image]))
    // The client and its own dependencies are about 65 MB on disk.
    expect((await size('agent-runtime-controller')) - (await size('agent-runtime-gateway'))).toBeGreaterThan(50e6)
  })

  test('the images run as uid 10001 and print the service version; the runner carries the agent CLI', async () => {
    for (const image of ['agent-runtime-gateway', 'agent-runtime-controller', 'agent-runtime-runner']) {
      expect((await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'id', image, '-u'])).trim()).toBe('10001')
      expect((await podman(['run', '--rm', '--network', 'none', image, '--version'])).trim()).toMatch(/^\d+\.\d+\.\d+$/)
    }
    expect(await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'claude', 'agent-runtime-runner', '--version'])).toContain('(Claude Code)')
  })

  test('a session through the images: gateway container → NATS → runner container (read-only root, no capabilities) → its Claude Code CLI → the model', async () => {
    const runnerPort = await freePort()
    const runner = await runContainer(`ar-img-runner-${process.pid}`, 'agent-runtime-runner', {
      flags: await emptyDirs(['sandbox', 'home-agent', 'tmp']),
      env: {
        NATS_URL: nats.url,
        RUNNER_ID: `img-runner-${process.pid}`,
        RUNNER_HTTP_PORT: String(runnerPort),
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_MAX_RETRIES: '1',
      },
    })
    stops.push(runner.stop)
    await answers(`http://127.0.0.1:${runnerPort}/health/ready`, runner.logs)
    expect((await get(`http://127.0.0.1:${runnerPort}/health/ready`)).body).toMatchObject({ status: 'ready', checks: { engine: true, pool: true } })

    const gatewayPort = await freePort()
    const gateway = await runContainer(`ar-img-gateway-${process.pid}`, 'agent-runtime-gateway', {
      flags: await emptyDirs(['tmp']),
      env: { NATS_URL: nats.url, SERVICE_PORT: String(gatewayPort), SERVICE_READINESS: 'bus' },
    })
    stops.push(gateway.stop)
    const url = `http://127.0.0.1:${gatewayPort}`
    await answers(`${url}/health/ready`, gateway.logs)
    // The web console is built into the image: its page and its bundle are served.
    const page = await fetch(`${url}/`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<script')
    expect((await fetch(`${url}/console/app.js`)).status).toBe(200)
    const client = await WsClient.connect(`ws://127.0.0.1:${gatewayPort}/ws/v1/agent`)
    stops.push(() => client.close())
    client.send({ type: 'execute', session_id: 'image-session', prompt: 'hello from the images', request_id: 'r1' })
    const done = await client.event('completed', 'image-session', 60_000).catch(async (err: Error) => {
      throw new Error(`${err.message}\n--- runner\n${await runner.logs()}\n--- gateway\n${await gateway.logs()}`)
    })
    expect(JSON.stringify(done)).toContain('Echo: hello from the images')
    expect(model.messageRequests().length).toBeGreaterThan(0)
    // The runner container counted the session; a PodMonitor scrapes this port.
    const metrics = (await get(`http://127.0.0.1:${runnerPort}/metrics`)).body as string
    expect(sample(metrics, 'service_sessions_total', { kind: 'new' })).toBe(1)
  })

  test('the controller image: probes and metrics on controller.http_port, against a Kubernetes API (the fake: the image is what is tested)', async () => {
    const api = await FakeKubeApi.start()
    stops.push(() => api.close())
    const kubeconfig = path.join(dir, 'kubeconfig')
    await writeFile(kubeconfig, kubeConfigFor(api.url).exportConfig(), { mode: 0o644 })
    const port = await freePort()
    const controller = await runContainer(`ar-img-controller-${process.pid}`, 'agent-runtime-controller', {
      flags: [...(await emptyDirs(['tmp'])), '--volume', `${kubeconfig}:/etc/agent-runtime/kubeconfig:ro`],
      env: {
        NATS_URL: nats.url,
        KUBECONFIG: '/etc/agent-runtime/kubeconfig',
        POD_NAMESPACE: 'sandboxes',
        POD_NAME: 'ctl-image',
        CONTROLLER_HTTP_PORT: String(port),
      },
    })
    stops.push(controller.stop)
    const url = `http://127.0.0.1:${port}`
    await answers(`${url}/healthz`, controller.logs)
    await answers(`${url}/readyz`, controller.logs)
    expect((await get(`${url}/readyz`)).body).toEqual({ status: 'ready', leading: true, checks: { bus: true, kube: true } })
    await vi.waitFor(async () => expect(sample((await get(`${url}/metrics`)).body, 'service_controller_pods', { state: 'warm', phase: 'Pending' })).toBe(2), {
      timeout: 20_000,
      interval: 250,
    })
    expect(sample((await get(`${url}/metrics`)).body, 'service_controller_leader')).toBe(1)
  })
})
