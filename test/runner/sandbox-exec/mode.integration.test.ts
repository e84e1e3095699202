import { mkdtemp, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { requireBwrap } from '../../fixtures/escape-corpus.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

/** sandbox.mode: what a machine without a working bubblewrap gets (simulated with a bwrap that is not there). */
describe('sandbox mode', () => {
  let stack: Stack | undefined
  afterEach(async () => {
    await stack?.close()
    stack = undefined
  })

  it('mode - auto without bwrap starts unconfined, and /health/ready says sandbox: none', async () => {
    stack = await startStack({ sandbox: { mode: 'auto', command: '/nonexistent/bwrap' } })
    const ready = await (await fetch(`${stack.url}/health/ready`)).json()
    expect(ready).toMatchObject({ status: 'ready', sandbox: 'none' })
    // Sessions still work; the environment allowlist still applies.
    process.env.NATS_TOKEN = 'mode-test-secret'
    const client = await WsClient.connect(stack.wsUrl)
    client.send({ type: 'execute', session_id: 'unconfined', prompt: 'tool: env', request_id: 1 })
    await client.next((msg) => msg.request_id === 1 && msg.event === 'completed')
    const result = client.eventsOf('unconfined').find((event) => event.event === 'tool_result')!
    expect(String(result.data)).toContain('PATH=')
    expect(String(result.data)).not.toContain('mode-test-secret')
    await client.close()
  })

  it('mode - bwrap that cannot work here fails the start', async () => {
    await expect(startStack({ sandbox: { mode: 'bwrap', command: '/nonexistent/bwrap' } })).rejects.toThrow(/sandbox.mode is bwrap/)
  })

  it('mode - none says so on /health/ready', async () => {
    stack = await startStack({ sandbox: { mode: 'none' } })
    expect(await (await fetch(`${stack.url}/health/ready`)).json()).toMatchObject({ status: 'ready', sandbox: 'none' })
  })

  describe('with bwrap', () => {
    requireBwrap()
    it('forwarder - socat asked for but not on PATH fails the start, and says how to get it', async () => {
      // A PATH with what the probe needs (true) and no socat; in /var/tmp, since the probe's sandbox replaces /tmp (the checkout may be there).
      const bin = await mkdtemp('/var/tmp/ar-path-')
      await symlink('/bin/true', path.join(bin, 'true'))
      const savedPath = process.env.PATH
      process.env.PATH = bin
      try {
        await expect(startStack({ sandbox: { mode: 'bwrap', command: '/usr/bin/bwrap', forwarder: 'socat' } })).rejects.toThrow(
          /sandbox.forwarder is socat, but socat is not on PATH/,
        )
      } finally {
        process.env.PATH = savedPath
        await rm(bin, { recursive: true, force: true })
      }
    })
  })
})
