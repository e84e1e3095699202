import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { processesUnder } from '../fixtures/processes.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const CRASH_HOOK = fileURLToPath(new URL('../fixtures/crash-on-signal.mjs', import.meta.url))

describe('a crash', () => {
  let dir: string
  let service: ServiceProcess | undefined
  afterAll(async () => {
    await service?.stop('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  })

  it('crash - an unhandled rejection is logged at fatal, every session process is ended, and the service exits 1', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-crash-'))
    const config = {
      server: { port: 0 },
      engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, stop_grace: '1s' },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
    }
    service = await startServiceProcess('dev', config, dir, { NODE_OPTIONS: `--import=${CRASH_HOOK}` })
    const client = await WsClient.connect(service.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', session_id: 'doomed', prompt: 'sleep: 60' })
    await client.event('tool_use', 'doomed')
    const sandbox = path.join(dir, 'sessions', 'doomed')
    expect((await processesUnder(sandbox)).length).toBeGreaterThan(0)
    const exited = new Promise<number | null>((resolve) => service!.child.once('exit', (code) => resolve(code)))
    service.child.kill('SIGUSR2')
    expect(await exited).toBe(1)
    const fatal = service
      .output()
      .split('\n')
      .filter((line) => line.includes('"level":"fatal"') || line.includes('"level":60'))
    expect(fatal.join('\n')).toContain('a bug nobody caught')
    await vi.waitFor(async () => expect(await processesUnder(sandbox)).toEqual([]), { timeout: 5_000 })
    await client.close()
  })
})
