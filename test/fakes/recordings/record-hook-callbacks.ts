/**
 * Records how the REAL Claude Code CLI answers in-process PreToolUse hooks
 * (hook-callbacks.ts), offline against the fake Anthropic API:
 *
 *   node test/fakes/recordings/record-hook-callbacks.ts
 *
 * writes claude-<version>-hook-callbacks.json next to this file (paths
 * rewritten to /srv/…). Re-record when the CLI version changes.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { startFakeAnthropic } from '../anthropic-api.ts'
import { claudeBin, claudeEnv } from '../../fixtures/claude-env.ts'
import { HOOK_SCENARIOS, RECORDING, runHookScenario } from './hook-callbacks.ts'

const version = execFileSync(claudeBin, ['--version'], { encoding: 'utf8' }).trim()
const api = await startFakeAnthropic()
const runs = []
try {
  for (const scenario of HOOK_SCENARIOS) {
    const env = claudeEnv({ baseUrl: api.url })
    try {
      const run = await runHookScenario({ command: claudeBin, args: [], env: env.env, prompt: (command) => `run: ${command}` }, scenario)
      console.log(
        `${scenario.name}: canary ${run.outcome.canaryRan ? 'RAN' : 'not run'}, exit ${run.outcome.exitCode}, tool_result ${JSON.stringify(run.outcome.toolResult?.content ?? null).slice(0, 100)}`,
      )
      runs.push({ ...scenario, ...run })
    } finally {
      env.cleanup()
    }
  }
} finally {
  await api.stop()
}
const text = JSON.stringify({ cli: version, recorded: new Date().toISOString().slice(0, 10), runs }, null, 1)
  .replace(/\/tmp\/claude-home-[\w]+/g, '/srv/home')
  .replace(/\/tmp\/hook-scenario-[\w]+/g, '/srv/work')
  .replace(/-tmp-hook-scenario-[\w]+/g, '-srv-work')
writeFileSync(RECORDING, text + '\n')
console.log(`wrote ${RECORDING.pathname}`)
