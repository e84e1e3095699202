import { readFileSync, rmSync } from 'node:fs'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { HOOK_SCENARIOS, RECORDING, runHookScenario, type HookOutcome } from './recordings/hook-callbacks.ts'

/**
 * The fake CLI's in-process hooks against the real CLI 2.1.330's recording
 * (test/fakes/recordings/): the same hook_callback request, the same answer
 * handling, the same tool_result texts, the same fail-closed cases.
 */
const recorded = JSON.parse(readFileSync(RECORDING, 'utf8')) as { cli: string; runs: { name: string; outcome: HookOutcome }[] }
const config = mkdtempSync(path.join(os.tmpdir(), 'fake-control-'))
afterAll(() => rmSync(config, { recursive: true, force: true }))

const fake = { ...FAKE_CLAUDE, env: { ...process.env, CLAUDE_CONFIG_DIR: config } as Record<string, string>, prompt: (command: string) => `tool: ${command}` }

/** What must match: everything but the text of a tool that ran (the fake prints its output, the real CLI a placeholder). */
function comparable(outcome: HookOutcome): HookOutcome {
  const { toolResult, ...rest } = outcome
  return { ...rest, ...(toolResult && { toolResult: toolResult.is_error ? toolResult : { content: '(ran)', is_error: false } }) }
}

describe('fake claude - in-process hooks as recorded from the real CLI', () => {
  it('recording - made with the CLI version the fake claims', () => {
    expect(recorded.cli).toBe('2.1.330 (Claude Code)')
    expect(recorded.runs.map((run) => run.name)).toEqual(HOOK_SCENARIOS.map((scenario) => scenario.name))
  })

  it.concurrent.each(HOOK_SCENARIOS.map((scenario) => [scenario.name, scenario] as const))('control - %s', async (_name, scenario) => {
    const real = recorded.runs.find((run) => run.name === scenario.name)!.outcome
    const { outcome } = await runHookScenario(fake, scenario, 15_000)
    expect(comparable(outcome)).toEqual(comparable(real))
  })
})
