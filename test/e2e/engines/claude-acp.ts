/**
 * Conformance row: Claude Code over ACP (`claude-code-acp`, which runs the
 * Claude Code bundled in @anthropic-ai/claude-agent-sdk) against the fake
 * Anthropic API (test/fakes/anthropic-api.ts), with a private HOME whose
 * user settings make every tool call ask (see claudeAcpSettings).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeAnthropic } from '../../fakes/anthropic-api.ts'
import { claudeEnv } from '../../fixtures/claude-env.ts'
import type { EngineRow } from './row.ts'

export const claudeAcpBin = fileURLToPath(new URL('../../../node_modules/.bin/claude-code-acp', import.meta.url))

/**
 * Claude Code's user settings that make every tool ask the ACP client: in
 * mode `default` it runs read-only commands (`echo`, `ls`) and read-only tools
 * without asking; an `ask` rule per tool makes it ask for each call.
 */
export const claudeAcpSettings = {
  permissions: {
    ask: [
      'Bash',
      'BashOutput',
      'KillShell',
      'Read',
      'Write',
      'Edit',
      'MultiEdit',
      'NotebookEdit',
      'Glob',
      'Grep',
      'LS',
      'WebFetch',
      'WebSearch',
      'Task',
      'Agent',
    ],
  },
}

/** Writes the settings into `$HOME/.claude/settings.json`. */
export function writeClaudeAcpSettings(home: string): void {
  mkdirSync(join(home, '.claude'), { recursive: true })
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify(claudeAcpSettings, null, 2))
}

export const claudeAcpRow: EngineRow = {
  name: 'claude-acp',
  // Thinking and the tool's output arrive; claude-code-acp 0.16.2 reports no tokens and no cost.
  // ACP's answer to a permission request carries no reason: the model reads only that the call was rejected.
  // claude-code-acp 0.16.2 reports no usage; ACP's permission answer has no reason field.
  shows: { thinking: true, toolOutput: true, cost: false, denyReason: false, tokens: false },
  // ACP has no request for a question to the person; its permission answer carries no reason, so a deny's message reaches the client, not the model.
  steering: { questions: false, denyMessage: false },
  async setup() {
    const api = await startFakeAnthropic()
    const env = claudeEnv({ baseUrl: api.url })
    writeClaudeAcpSettings(env.home)
    return {
      config: { name: 'claude-acp', type: 'acp', command: claudeAcpBin, args: [], env: env.env },
      modelSaw: (text) => api.messageRequests().some((r) => JSON.stringify(r.body?.messages ?? []).includes(JSON.stringify(text).slice(1, -1))),
      async stop() {
        await api.stop()
        env.cleanup()
      },
    }
  },
}
