/**
 * Records how the REAL Claude Code CLI answers in-process PreToolUse hooks
 * (hook-callbacks.ts), offline against the fake Anthropic API:
 *
 *   node test/fakes/recordings/record-hook-callbacks.ts
 *
 * writes claude-<version>-hook-callbacks.json next to this file (paths
 * rewritten to /srv/…). Re-record when the CLI version changes.
 */
import { claudeBin } from '../../fixtures/claude-env.ts'
import { recordClaudeScenarios } from './claude-recorder.ts'
import { HOOK_SCENARIOS, RECORDING, runHookScenario } from './hook-callbacks.ts'

await recordClaudeScenarios({
  scenarios: HOOK_SCENARIOS,
  run: (scenario, env) => runHookScenario({ command: claudeBin, args: [], env, prompt: (command) => `run: ${command}` }, scenario),
  summary: (run) =>
    `canary ${run.outcome.canaryRan ? 'RAN' : 'not run'}, exit ${run.outcome.exitCode}, tool_result ${JSON.stringify(run.outcome.toolResult?.content ?? null).slice(0, 100)}`,
  file: RECORDING,
  workPrefix: 'hook-scenario-',
})
