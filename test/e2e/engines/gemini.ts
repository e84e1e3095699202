/**
 * Conformance row: Gemini CLI over ACP (`gemini --acp`) against the fake
 * Gemini API (test/fakes/gemini-api.ts), with a private HOME holding the
 * settings that run it offline (../shared/reference/README.md, gemini-cli/).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeGemini } from '../../fakes/gemini-api.ts'
import type { EngineRow } from './row.ts'

export const geminiBin = fileURLToPath(new URL('../../../node_modules/.bin/gemini', import.meta.url))
/** The policy that makes every tool call ask the runner (runner/engine/acp/). */
export const geminiAskPolicy = fileURLToPath(new URL('../../../runner/engine/acp/gemini-ask-every-tool.toml', import.meta.url))

/** A HOME with the settings Gemini CLI needs offline: API-key auth, no folder trust, no updates, no telemetry. */
export function geminiHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'gemini-home-'))
  mkdirSync(join(home, '.gemini'))
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  }
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2))
  return home
}

/** The environment of `gemini --acp` against a fake at `baseUrl`. */
export function geminiEnv(baseUrl: string, home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    SHELL: '/bin/bash',
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    GEMINI_API_KEY: 'test',
    // No second node process, no telemetry, the sandbox directory trusted.
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_TELEMETRY_ENABLED: 'false',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  }
}

export const geminiRow: EngineRow = {
  name: 'gemini',
  // Thought chunks arrive; a shell call's output does not (tool_call_update has content: []); no cost.
  // ACP's answer to a permission request carries no reason: the model reads only that the call was rejected.
  // Gemini CLI 0.61.0's session/load rewrites the stored session before it reads it: nothing to resume.
  shows: { thinking: true, toolOutput: false, cost: false, denyReason: false, resumes: false },
  // ACP has no request for a question to the person; its permission answer carries no reason, so a deny's message reaches the client, not the model.
  steering: { questions: false, denyMessage: false },
  async setup() {
    const api = await startFakeGemini()
    const home = geminiHome()
    return {
      config: {
        name: 'gemini',
        type: 'acp',
        command: geminiBin,
        // The model pinned: no router call before each prompt.
        args: ['--acp', '--policy', geminiAskPolicy, '--model', 'gemini-2.5-flash'],
        env: geminiEnv(api.url, home),
        // The sandbox's allowlist reads Claude's base URL variables only: name the fake.
        network_allow: [new URL(api.url).host],
      },
      modelSaw: (text) => api.saw(text),
      async stop() {
        await api.stop()
        rmSync(home, { recursive: true, force: true })
      },
    }
  },
}
