/**
 * SIGTERM on a real `agent-runtime dev` process (the fake Claude CLI behind
 * it): readiness 503 and new work refused at once, the running turn finishes
 * within the grace period or is stopped at its end, exit 0, and no process of
 * any session left behind.
 */
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { processesUnder } from '../fixtures/processes.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { handshake } from '../fixtures/ws-handshake.ts'
import { WsClient } from '../fixtures/ws-client.ts'

let dir: string
let service: ServiceProcess | undefined
let client: WsClient | undefined
afterEach(async () => {
  await client?.close()
  if (service && service.child.exitCode === null) await service.stop('SIGKILL')
  await rm(dir, { recursive: true, force: true })
  client = service = undefined
})

async function startDev(grace: string): Promise<{ url: string; wsUrl: string; sandboxes: string }> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ar-shutdown-'))
  const sandboxes = path.join(dir, 'sessions')
  await mkdir(sandboxes, { recursive: true })
  service = await startServiceProcess(
    'dev',
    {
      server: { port: 0, shutdown_grace: grace },
      engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') } },
      session: { work_dir: sandboxes, marker_dir: path.join(dir, 'markers') },
      log: { level: 'info' },
    },
    dir,
  )
  const url = service.address!
  return { url, wsUrl: url.replace(/^http/, 'ws') + '/ws/v1/agent', sandboxes: await realpath(sandboxes) }
}

function exited(child: ServiceProcess['child']): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

describe('shutdown - SIGTERM on a running service', () => {
  it('shutdown - draining refuses new work with 503 at once, the running turn completes, exit 0, no process left', async () => {
    const { url, wsUrl, sandboxes } = await startDev('20s')
    client = await WsClient.connect(wsUrl)
    client.send({ type: 'execute', session_id: 'long', prompt: 'sleep: 2', request_id: 1 })
    await client.event('tool_use', 'long')
    const exit = exited(service!.child)
    service!.child.kill('SIGTERM')

    // Readiness turns 503 at once; new streams and new turns are refused.
    await vi.waitFor(async () => expect((await fetch(`${url}/health/ready`)).status).toBe(503), { timeout: 5_000, interval: 50 })
    expect(await (await fetch(`${url}/health/ready`)).json()).toMatchObject({ status: 'draining' })
    expect(await handshake(wsUrl)).toMatchObject({ opened: false, status: 503, body: { code: 'SHUTTING_DOWN' } })
    client.send({ type: 'execute', session_id: 'new', prompt: 'hi', request_id: 2 })
    expect(await client.next((msg) => msg.request_id === 2)).toMatchObject({ event: 'error', error: { code: 'SHUTTING_DOWN' } })
    const chat = await fetch(`${url}/v1/agent/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi' }),
    })
    expect(chat.status).toBe(503)
    expect(chat.headers.get('retry-after')).toBe('5')

    // The running turn finishes within the grace period and reaches the client.
    expect(await client.next((msg) => msg.request_id === 1 && msg.event === 'completed', 15_000)).toMatchObject({ session_id: 'long' })
    expect(await exit).toBe(0)
    expect(await processesUnder(sandboxes)).toEqual([])
    expect(service!.output()).toMatch(/draining: waiting for running turns/)
  })

  it('shutdown - a turn still running when the grace ends is stopped; exit 0, no orphan process', async () => {
    const { wsUrl, sandboxes } = await startDev('500ms')
    client = await WsClient.connect(wsUrl)
    client.send({ type: 'execute', session_id: 'endless', prompt: 'sleep: 60', request_id: 1 })
    await client.event('tool_use', 'endless')
    // The CLI and its tool's shell and sleep.
    await vi.waitFor(async () => expect((await processesUnder(sandboxes)).length).toBeGreaterThanOrEqual(2), { timeout: 5_000 })
    const started = Date.now()
    const exit = exited(service!.child)
    service!.child.kill('SIGTERM')
    // The runner's stop ends the turn: the still-connected client learns it.
    expect(await client.event('stopped', 'endless', 15_000)).toMatchObject({ turn_id: expect.any(String) })
    expect(await exit).toBe(0)
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(await processesUnder(sandboxes)).toEqual([])
    expect(service!.output()).toMatch(/grace period over/)
  })

  it('shutdown - a second SIGTERM cuts the grace short', async () => {
    const { url, wsUrl, sandboxes } = await startDev('10m')
    client = await WsClient.connect(wsUrl)
    client.send({ type: 'execute', session_id: 'impatient', prompt: 'sleep: 60', request_id: 1 })
    await client.event('tool_use', 'impatient')
    const exit = exited(service!.child)
    service!.child.kill('SIGTERM')
    await vi.waitFor(async () => expect((await fetch(`${url}/health/ready`)).status).toBe(503), { timeout: 5_000, interval: 50 })
    service!.child.kill('SIGTERM')
    expect(await exit).toBe(0)
    expect(await processesUnder(sandboxes)).toEqual([])
    expect(service!.output()).toMatch(/second signal/)
  })
})
