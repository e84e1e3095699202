import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.ts'
import { claudeBin, claudeEnv, type ClaudeEnv } from '../fixtures/claude-env.ts'
import { requireBwrap, ESCAPES, ORDINARY, startEscapeStack, type EscapeStack } from '../fixtures/escape-corpus.ts'

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')

/**
 * The escape corpus through the REAL Claude Code CLI (fake model API on
 * loopback): the model issues each attempt as a Bash tool call; the host is
 * checked afterwards. Default sandbox config (bwrap, engine.network
 * allowlist), per-session CLI HOME (no HOME in engine.env); the WAF is off so
 * that what is tested is what the kernel holds. Needs bubblewrap.
 */
describe('sandbox - escape corpus, real Claude Code CLI, default config', () => {
  requireBwrap()
  let api: FakeAnthropic
  let env: ClaudeEnv
  let stack: EscapeStack

  beforeAll(async () => {
    api = await startFakeAnthropic()
    env = claudeEnv({ baseUrl: api.url })
    const { HOME: _home, ...engineEnv } = env.env
    stack = await startEscapeStack({ command: claudeBin, args: [], env: engineEnv, stop_grace: '2s' }, (command) => `run-b64: ${b64(command)}`, {
      waf: { enabled: false },
    })
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
    await api?.stop()
    env?.cleanup()
  })

  it('real CLI - the model API on loopback is reached through the allowlist (the turns above completed)', () => {
    expect(api.messageRequests().length).toBeGreaterThan(0)
  })

  it.each(ESCAPES)('real CLI escape - $name: contained', async (attempt) => {
    const output = await stack.run('escape-attacker', attempt.command(stack.ctx))
    if (process.env.AR_DEBUG) console.log(attempt.name, '=>', output.slice(0, 600))
    expect(output).toContain('done')
    await attempt.contained(stack.ctx, output)
  })

  it.each(ORDINARY)('real CLI ordinary work - $name still works', async (work) => {
    expect(await stack.run('escape-worker', work.command)).toMatch(work.expected)
  })
})
