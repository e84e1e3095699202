import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { startFakeResponses } from '../../fakes/openai-responses.ts'
import type { EngineRow } from './row.ts'

/** The real Codex CLI (npm @openai/codex 0.169.0) installed with the dev dependencies. */
export const codexBin = path.resolve(import.meta.dirname, '../../../node_modules/.bin/codex')

/** `-c` flags naming a Responses API at `baseUrl` as Codex's model provider, with no retries (the fake answers at once). */
export function fakeProviderArgs(baseUrl: string): string[] {
  const provider = (key: string, value: string) => ['-c', `model_providers.fake.${key}=${value}`]
  return [
    '-c',
    'model_provider="fake"',
    ...provider('name', '"fake"'),
    ...provider('base_url', JSON.stringify(baseUrl)),
    ...provider('env_key', '"FAKE_OPENAI_API_KEY"'),
    ...provider('wire_api', '"responses"'),
    ...provider('request_max_retries', '0'),
    ...provider('stream_max_retries', '0'),
    ...provider('stream_idle_timeout_ms', '30000'),
  ]
}

/**
 * Codex over its app-server protocol against the fake OpenAI Responses API
 * (test/fakes/openai-responses.ts). A private HOME (Codex keeps its threads in
 * $HOME/.codex); the model slug is one Codex knows (an unknown one adds a
 * warning to every turn).
 */
export const codexRow: EngineRow = {
  name: 'codex',
  shows: { thinking: true, toolOutput: true, cost: false },
  // The person is asked from the PreToolUse hook (runner/engine/codex/tool-gate.ts), whose block reason reaches
  // the model; the app-server has no request by which the agent asks the person a question.
  steering: { questions: false, denyMessage: true },
  async setup() {
    const api = await startFakeResponses()
    const home = await mkdtemp(path.join(os.tmpdir(), 'codex-home-'))
    return {
      config: {
        name: 'codex',
        type: 'codex',
        command: codexBin,
        args: fakeProviderArgs(api.url),
        env: { HOME: home, FAKE_OPENAI_API_KEY: 'fake-key' },
        model: 'gpt-5.5',
        // The provider's URL is in the args, where the sandbox's allowlist does not look: name it.
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
