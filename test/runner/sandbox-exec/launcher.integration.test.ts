import { execFile } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { LAUNCH_WITH_FORWARDER } from '../../../runner/sandbox-exec/session-sandbox.ts'
import { requireBwrap } from '../../fixtures/escape-corpus.ts'

/** The launcher in a network namespace of its own, as a session's sandbox runs it: `$1` listeners, `$2` forwarders, three words each, then the command. */
function launch(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const bwrap = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-net', '--unshare-pid', '--die-with-parent']
  return new Promise((resolve) => {
    execFile('bwrap', [...bwrap, '/bin/sh', '-c', LAUNCH_WITH_FORWARDER, 'sh', ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr })
    })
  })
}

describe('sandbox forwarder launcher', () => {
  requireBwrap()

  it('starts the command once every listener listens', async () => {
    const socat = (port: number) => ['socat', `TCP4-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr`, 'UNIX-CONNECT:/nowhere.sock']
    // The command sees both ports listening (sockstat counts them) when it starts.
    const result = await launch(['2', '2', ...socat(3128), ...socat(4000), '/bin/sh', '-c', 'grep "^TCP:" /proc/net/sockstat'])
    expect(result).toMatchObject({ code: 0 })
    expect(result.stdout).toMatch(/^TCP: inuse 2 /)
  })

  it('gives up with a clear error when a forwarder never listens, and never starts the command', async () => {
    const result = await launch(['1', '1', '/bin/true', 'a', 'b', '/bin/echo', 'the command ran'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('agent-runtime sandbox: the network forwarder did not start')
    expect(result.stdout).not.toContain('the command ran')
  })
})
