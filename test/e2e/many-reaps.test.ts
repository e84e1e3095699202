import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { untilNoProcessUnder } from '../fixtures/processes.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

/**
 * Issue 16, finding 1: many sessions ending at once (idle reaps) each looked
 * through every process on the host in parallel; with a usual limit of open
 * files the scans ran out of descriptors and an uncaught error ended the service.
 */
describe('many sessions ending at once', () => {
  let dir: string
  let service: ServiceProcess
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-reaps-'))
    const config = {
      server: { port: 0, shutdown_grace: '1s' },
      engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, idle_timeout: '300ms' },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
    }
    service = await startServiceProcess('dev', config, dir, {}, { maxOpenFiles: 1024 })
  })
  afterAll(async () => {
    await service?.stop('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  })

  it('40 sessions reaped together, twice: the service lives on and every turn ends once', async () => {
    const client = await WsClient.connect(service.address!.replace('http', 'ws') + '/ws/v1/agent')
    try {
      for (const round of [1, 2]) {
        const ids = Array.from({ length: 40 }, (_, i) => `reap-${i}`)
        for (const id of ids) client.send({ type: 'execute', session_id: id, prompt: `round ${round}`, request_id: `${id}/${round}` })
        for (const id of ids) {
          const end = await client.next((msg) => msg.request_id === `${id}/${round}` && (msg.event === 'completed' || msg.event === 'error'), 30_000)
          expect(end, service.output().slice(-2_000)).toMatchObject({ event: 'completed', data: `Echo: round ${round}` })
        }
        // Every CLI is reaped about now, all at once.
        await untilNoProcessUnder(path.join(dir, 'sessions'), 30_000, service.output)
        expect(service.child.exitCode, service.output().slice(-2_000)).toBeNull()
        expect((await fetch(`${service.address}/health/live`)).status).toBe(200)
      }
      for (let i = 0; i < 40; i++) {
        const ends = client.eventsOf(`reap-${i}`).filter((msg) => msg.event === 'completed' || msg.event === 'error')
        expect(ends).toHaveLength(2)
      }
    } finally {
      await client.close()
    }
  })
})
