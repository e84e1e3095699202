import { startFakeAnthropic } from '../../fakes/anthropic-api.ts'
import { claudeBin, claudeEnv } from '../../fixtures/claude-env.ts'
import type { EngineRow } from './row.ts'

/** Claude Code (the native engine, stream-json) against the fake Anthropic Messages API. */
export const claudeRow: EngineRow = {
  name: 'claude',
  shows: { thinking: true, toolOutput: true, cost: true },
  steering: { questions: true, denyMessage: true },
  async setup() {
    const api = await startFakeAnthropic()
    const env = claudeEnv({ baseUrl: api.url })
    return {
      config: { name: 'claude', type: 'claude', command: claudeBin, env: env.env },
      modelSaw: (text) => api.messageRequests().some((request) => JSON.stringify(request.body).includes(text)),
      async stop() {
        await api.stop()
        env.cleanup()
      },
    }
  },
}
