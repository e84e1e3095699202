import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBwrap, ESCAPES, ORDINARY, startEscapeStack, type EscapeStack } from '../../fixtures/escape-corpus.ts'
import { FAKE_CLAUDE } from '../../fixtures/stack.ts'

/**
 * The escape corpus with the fake CLI (real Bash commands, no model): every
 * attempt runs as a tool call inside a default-config dev service, and the
 * host is checked afterwards. Needs bubblewrap (Debian `bubblewrap`).
 */
describe('sandbox - escape corpus, fake CLI, default config', () => {
  requireBwrap()
  let stack: EscapeStack
  beforeAll(async () => {
    // The WAF is off: what is tested here is what the kernel holds when a command gets past it.
    stack = await startEscapeStack({ command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args }, (command) => `tool: ${command}`, {
      waf: { enabled: false },
      sandbox: { mode: process.env.AR_TEST_SANDBOX_MODE ?? 'auto' },
    })
  }, 30_000)
  afterAll(async () => {
    await stack?.close()
  })

  it('escape - /health/ready reports the bwrap sandbox', async () => {
    const ready = await fetch(`${stack.service.address!.replace('localhost', '127.0.0.1')}/health/ready`).then((r) => r.json())
    expect(ready).toMatchObject({ status: 'ready', sandbox: 'bwrap' })
  })

  it.each(ESCAPES)('escape - $name: contained', async (attempt) => {
    const output = await stack.run('escape-attacker', attempt.command(stack.ctx))
    expect(output).toContain('done')
    await attempt.contained(stack.ctx, output)
  })

  it.each(ORDINARY)('ordinary work - $name still works', async (work) => {
    expect(await stack.run('escape-worker', work.command)).toMatch(work.expected)
  })
})
