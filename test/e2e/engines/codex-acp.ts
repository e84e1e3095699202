/**
 * Conformance row: Codex over ACP (`codex-acp`) against the fake OpenAI
 * Responses API (test/fakes/openai-responses.ts), with a private CODEX_HOME
 * whose config.toml names the fake as its provider and sets the approvals
 * that make tool calls ask (see codexAcpConfig), and whose rules make the
 * read-only commands ask too.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeResponses } from '../../fakes/openai-responses.ts'
import type { EngineRow } from './row.ts'

export const codexAcpBin = fileURLToPath(new URL('../../../node_modules/.bin/codex-acp', import.meta.url))
/** Execpolicy rules that make the read-only commands ask too (runner/engine/acp/). */
export const codexAskRules = fileURLToPath(new URL('../../../runner/engine/acp/codex-ask-every-command.rules', import.meta.url))

/**
 * `CODEX_HOME/config.toml`: the fake as the model provider, no retries, no
 * update checks, analytics or telemetry; `approval_policy = "untrusted"`
 * asks the client before every command Codex does not know as read-only,
 * without a Codex sandbox (the session sandbox is the runner's).
 */
export function codexAcpConfig(baseUrl: string): string {
  return [
    'model = "gpt-5.5"',
    'model_provider = "fake"',
    'approval_policy = "untrusted"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${baseUrl}"`,
    'env_key = "FAKE_OPENAI_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    'stream_idle_timeout_ms = 30000',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[otel]',
    'exporter = "none"',
    '',
  ].join('\n')
}

/** A CODEX_HOME with the config and the ask-every-command rules (under /tmp: fine with danger-full-access, Codex's own sandbox is not used). */
export function codexAcpHome(baseUrl: string): string {
  const home = mkdtempSync(join(tmpdir(), 'codex-acp-home-'))
  writeFileSync(join(home, 'config.toml'), codexAcpConfig(baseUrl))
  mkdirSync(join(home, 'rules'))
  copyFileSync(codexAskRules, join(home, 'rules', 'default.rules'))
  return home
}

export const codexAcpRow: EngineRow = {
  name: 'codex-acp',
  // ACP's answer to a permission request carries no reason: the model reads only that the call was rejected.
  // codex-acp 0.16.0 sends only usage_update {used, size} (the context), no turn tokens.
  shows: { thinking: true, toolOutput: true, cost: false, denyReason: false, tokens: false },
  // ACP has no request for a question to the person; its permission answer carries no reason, so a deny's message reaches the client, not the model.
  steering: { questions: false, denyMessage: false },
  async setup() {
    const api = await startFakeResponses()
    const home = codexAcpHome(api.url)
    return {
      config: {
        name: 'codex-acp',
        type: 'acp',
        command: codexAcpBin,
        args: [],
        env: {
          PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
          HOME: home,
          CODEX_HOME: home,
          SHELL: '/bin/bash',
          FAKE_OPENAI_KEY: 'test',
        },
        // The provider's URL is in config.toml, where the sandbox's allowlist does not look: name it.
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
