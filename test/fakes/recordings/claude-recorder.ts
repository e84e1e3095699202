/**
 * What every recording of the real Claude Code CLI does around its scenarios:
 * the fake Anthropic API, a fresh HOME per scenario, one line of output per
 * scenario, and the recording written with the CLI's version and the
 * machine's paths rewritten to /srv/…, so it does not change from machine to machine.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { claudeBin, claudeEnv } from '../../fixtures/claude-env.ts'
import { startFakeAnthropic } from '../anthropic-api.ts'

export async function recordClaudeScenarios<S extends { name: string }, R>(options: {
  scenarios: readonly S[]
  run(scenario: S, env: Record<string, string>): Promise<R>
  /** One line about a run, printed after its scenario's name. */
  summary(run: R): string
  file: URL
  /** The temporary folder prefix the scenarios work in (`hook-scenario-`): rewritten to /srv/work. */
  workPrefix: string
}): Promise<void> {
  const version = execFileSync(claudeBin, ['--version'], { encoding: 'utf8' }).trim()
  const api = await startFakeAnthropic()
  const runs: (S & R)[] = []
  try {
    for (const scenario of options.scenarios) {
      const env = claudeEnv({ baseUrl: api.url })
      try {
        const run = await options.run(scenario, env.env)
        console.log(`${scenario.name}: ${options.summary(run)}`)
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
    .replace(new RegExp(`/tmp/${options.workPrefix}[\\w]+`, 'g'), '/srv/work')
    .replace(new RegExp(`-tmp-${options.workPrefix}[\\w]+`, 'g'), '-srv-work')
  writeFileSync(options.file, `${text}\n`)
  console.log(`wrote ${options.file.pathname}`)
}
