import { fileURLToPath, pathToFileURL } from 'node:url'
import { ServiceError } from '../../../contract/mod.ts'

/** The plugin that asks the runner about each tool call (loaded by the CLI from the service's code, visible in the sandbox). */
export const GATE_PLUGIN = fileURLToPath(new URL('./gate-plugin.mjs', import.meta.url))
/** The file descriptor of the CLI process on which the gate plugin talks to the runner. */
export const GATE_FD = 3

export interface OpenCodeArgsConfig {
  /** Arguments put before the ones the engine adds. */
  args: readonly string[]
  /** `provider/model`, passed as `--model`; none: the configuration's `model`. */
  model?: string | undefined
}

/** `opencode run` for one turn: JSON lines with the thinking; the CLI's stored session continued when there is one. The prompt goes to stdin. */
export function runArgs(config: OpenCodeArgsConfig, sessionId: string | undefined): string[] {
  return [
    ...config.args,
    'run',
    '--format',
    'json',
    '--thinking',
    ...(config.model !== undefined ? ['--model', config.model] : []),
    ...(sessionId !== undefined ? ['--session', sessionId] : []),
  ]
}

/**
 * The CLI's environment for one turn: `OPENCODE_CONFIG_CONTENT` (the
 * configuration the service gives it, a JSON object) with the gate plugin
 * added, and the channel's descriptor for the plugin.
 */
export function turnEnv(env: Record<string, string>): Record<string, string> {
  const raw = env.OPENCODE_CONFIG_CONTENT
  let config: unknown = {}
  if (raw !== undefined && raw.trim() !== '') {
    try {
      config = JSON.parse(raw)
    } catch (err) {
      throw new ServiceError('ENGINE_START_FAILED', `OPENCODE_CONFIG_CONTENT is not JSON: ${(err as Error).message}`, { cause: err })
    }
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new ServiceError('ENGINE_START_FAILED', 'OPENCODE_CONFIG_CONTENT must be a JSON object')
  }
  const given = (config as { plugin?: unknown }).plugin
  if (given !== undefined && !Array.isArray(given)) throw new ServiceError('ENGINE_START_FAILED', 'OPENCODE_CONFIG_CONTENT: plugin must be a list')
  const plugin = [...(given ?? []), pathToFileURL(GATE_PLUGIN).href]
  return { ...env, OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...config, plugin }), AGENT_RUNTIME_GATE_FD: String(GATE_FD) }
}
