/**
 * Records how the REAL Claude Code CLI asks for permission and asks questions
 * over the control protocol (permission-prompts.ts), offline against the fake
 * Anthropic API:
 *
 *   node test/fakes/recordings/record-permission-prompts.ts
 *
 * writes claude-<version>-permission-prompts.json next to this file (paths
 * rewritten to /srv/…). Re-record when the CLI version changes.
 */
import { claudeBin } from '../../fixtures/claude-env.ts'
import { recordClaudeScenarios } from './claude-recorder.ts'
import { PERMISSION_RECORDING, PROMPT_SCENARIOS, runPromptScenario } from './permission-prompts.ts'

await recordClaudeScenarios({
  scenarios: PROMPT_SCENARIOS,
  run: (scenario, env) => runPromptScenario({ command: claudeBin, env }, scenario),
  summary: (run) =>
    `canary ${run.outcome.canaryRan ? 'RAN' : 'not run'}, requests ${run.outcome.requests.join(',')}, results ${JSON.stringify(run.outcome.toolResults).slice(0, 160)}`,
  file: PERMISSION_RECORDING,
  workPrefix: 'prompt-scenario-',
})
