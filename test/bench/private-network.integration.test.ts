import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

describe('rerunInPrivateNetwork', () => {
  it('runs the script again where only loopback is up, passing its output and exit code through', () => {
    const probe = fileURLToPath(new URL('./private-network-probe.ts', import.meta.url))
    const run = spawnSync(process.execPath, [probe], { encoding: 'utf8' })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(3)
    expect(JSON.parse(run.stdout)).toEqual({ interfaces: ['lo'], reply: 'hello' })
  })
})
