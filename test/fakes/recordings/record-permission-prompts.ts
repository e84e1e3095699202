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
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { startFakeAnthropic } from '../anthropic-api.ts'
import { claudeBin, claudeEnv } from '../../fixtures/claude-env.ts'
import { PERMISSION_RECORDING, PROMPT_SCENARIOS, runPromptScenario } from './permission-prompts.ts'

const version = execFileSync(claudeBin, ['--version'], { encoding: 'utf8' }).trim()
const api = await startFakeAnthropic()
const runs = []
try {
  for (const scenario of PROMPT_SCENARIOS) {
    const env = claudeEnv({ baseUrl: api.url })
    try {
      const run = await runPromptScenario({ command: claudeBin, env: env.env }, scenario)
      api.messageRequests().splice(0)
      console.log(
        `${scenario.name}: canary ${run.outcome.canaryRan ? 'RAN' : 'not run'}, requests ${run.outcome.requests.join(',')}, results ${JSON.stringify(run.outcome.toolResults).slice(0, 160)}`,
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
  .replace(/\/tmp\/prompt-scenario-[\w]+/g, '/srv/work')
  .replace(/-tmp-prompt-scenario-[\w]+/g, '-srv-work')
writeFileSync(PERMISSION_RECORDING, text + '\n')
console.log(`wrote ${PERMISSION_RECORDING.pathname}`)
