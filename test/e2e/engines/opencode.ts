import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { startFakeChat } from '../../fakes/openai-chat.ts'
import { opencodeCli } from '../../fixtures/opencode-cli.ts'
import type { EngineRow } from './row.ts'

/** The model the fake provider offers, as `opencode run --model` names it. */
export const FAKE_MODEL = 'fake/fake-model'

/**
 * The environment that runs OpenCode offline against an OpenAI-compatible
 * Chat Completions API at `baseUrl` (`http://127.0.0.1:PORT/v1`): a custom
 * provider `fake` (`@ai-sdk/openai-compatible`, bundled in the CLI) in
 * `OPENCODE_CONFIG_CONTENT`, no models.dev fetch, no update check, no sharing.
 */
export function opencodeEnv(baseUrl: string, home: string): Record<string, string> {
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake',
        options: { baseURL: baseUrl, apiKey: 'fake-key' },
        models: { 'fake-model': { name: 'Fake Model' } },
      },
    },
    model: FAKE_MODEL,
    autoupdate: false,
    share: 'disabled',
  }
  return { HOME: home, OPENCODE_CONFIG_CONTENT: JSON.stringify(config), OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' }
}

/**
 * OpenCode as `opencode run --format json`, a process per turn, against the
 * fake Chat Completions API (test/fakes/openai-chat.ts). A private HOME
 * (OpenCode keeps its sessions in $HOME/.local/share/opencode; without HOME in
 * the entry the service gives each session its own). It prints the
 * thinking (`--thinking`) and the tool's output; the fake's provider has no
 * prices, so the cost is 0.
 */
export const opencodeRow: EngineRow = {
  name: 'opencode',
  // Asked from the gate plugin's tool.execute.before (`opencode run` rejects its own permission asks itself); a deny's
  // message is the tool's error the model reads. No questions: `opencode run` answers none of its question tool's asks,
  // and the engine does not put them to a person yet.
  steering: { questions: false, denyMessage: true },
  shows: { thinking: true, toolOutput: true, cost: false },
  async setup() {
    const api = await startFakeChat()
    const home = await mkdtemp(path.join(os.tmpdir(), 'opencode-home-'))
    return {
      config: {
        name: 'opencode',
        type: 'opencode',
        command: await opencodeCli(),
        args: [],
        env: opencodeEnv(api.url, home),
        model: FAKE_MODEL,
        // The sandbox's allowlist does not read the provider's baseURL from OPENCODE_CONFIG_CONTENT.
        network_allow: [new URL(api.url).host],
      },
      modelSaw: (text) => api.saw(text),
      async stop() {
        await api.stop()
        await rm(home, { recursive: true, force: true })
      },
    }
  },
}
