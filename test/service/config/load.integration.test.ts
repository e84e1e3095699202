/** The command line on a config it refuses: a process of its own (the rest of the config tests: load.test.ts). */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { configFile } from '../../fixtures/config-file.ts'

const run = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../../bin/agent-runtime.ts')

describe('config', () => {
  it('cli - a bad config file exits 2 naming the key, and nothing starts', async () => {
    const file = await configFile('engine:\n  timeout: 5x\n')
    const err = (await run(process.execPath, [BIN, '--config', file]).catch((e: unknown) => e)) as { code: number; stderr: string }
    expect(err.code).toBe(2)
    expect(err.stderr).toContain('engine.timeout')
  })

  it('cli - --version prints the service version', async () => {
    const { stdout } = await run(process.execPath, [BIN, '--version'])
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('cli - an unknown subcommand exits 2', async () => {
    const err = (await run(process.execPath, [BIN, 'launch']).catch((e: unknown) => e)) as { code: number; stderr: string }
    expect(err.code).toBe(2)
    expect(err.stderr).toContain('usage')
  })
})
