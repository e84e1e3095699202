/**
 * The command line of `codex app-server` as the runner starts it. The model
 * provider (`model_provider`, `[model_providers.X]` with `base_url`,
 * `wire_api = "responses"`, retries) is the deployment's: in `args` as `-c`
 * flags or in a config.toml of the CODEX_HOME given in `env`. What the runner
 * needs of every Codex is set here, over whatever those say.
 */
import { SESSION_TAG_VAR } from '../../process/env.ts'
import { GATE_CLIENT } from './tool-gate.ts'

export interface CodexArgsConfig {
  /** Arguments put before the ones the engine adds (e.g. `-c` flags naming the model provider). */
  args: readonly string[]
  model?: string | undefined
}

/** A TOML basic string. */
export const tomlString = (value: string): string => JSON.stringify(value)

export interface CodexRun {
  /** The session tag, set for every command Codex runs whatever its shell_environment_policy drops. */
  sessionTag?: string | undefined
  /** With a tool gate: the hook program's command (node, the client, the gate's socket) and its time limit. */
  gate?: { node: string; socketPath: string; timeoutSeconds: number } | undefined
}

export function codexArgs(config: CodexArgsConfig, run: CodexRun): string[] {
  const set = (key: string, value: string) => ['-c', `${key}=${value}`]
  const args = [
    ...config.args,
    'app-server',
    // Our own bubblewrap sandbox is around the CLI: Codex's sandbox inside it would only fail. Codex asks
    // (item/commandExecution/requestApproval) when it finds a command dangerous; the runner's gate answers.
    ...set('sandbox_mode', tomlString('danger-full-access')),
    ...set('approval_policy', tomlString('on-request')),
    ...set('check_for_update_on_startup', 'false'),
    ...set('analytics.enabled', 'false'),
    ...set('feedback.enabled', 'false'),
    ...set('otel.exporter', tomlString('none')),
    ...(config.model ? set('model', tomlString(config.model)) : []),
  ]
  if (run.sessionTag !== undefined) args.push(...set(`shell_environment_policy.set.${SESSION_TAG_VAR}`, tomlString(run.sessionTag)))
  if (run.gate) {
    const { node, socketPath, timeoutSeconds } = run.gate
    const command = [node, GATE_CLIENT, socketPath, String(timeoutSeconds)].map(shellQuote).join(' ')
    // Every tool call first runs the hook (matcher `.*`); it outlives the gate's own limit by a margin, so the hook's answer (a block) comes first.
    const hook = `[{matcher=".*",hooks=[{type="command",command=${tomlString(command)},timeout=${timeoutSeconds + 10}}]}]`
    args.push('--enable', 'hooks', ...set('hooks.PreToolUse', hook))
  }
  return args
}

/** One word for `sh -c` (Codex runs a hook command through the shell). */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}
