/**
 * The environment an agent CLI gets: the service's own, minus variables that
 * would let the service's environment change how the CLI's code loads or
 * runs, plus the configured `engine.env`, plus the session tag.
 */
export const ENV_DENY_LIST = [
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'DYLD_LIBRARY_PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PERL5OPT',
  'RUBYOPT',
  // The service's own secrets are not the agent's business.
  'SERVICE_API_KEY',
  'SERVICE_API_KEYS',
  'SERVICE_CHAT_APP_TOKEN',
  'SERVICE_CHAT_BOT_TOKEN',
] as const

/** Every process of a session carries this variable, so its descendants can be found even after they are reparented. */
export const SESSION_TAG_VAR = 'AGENT_RUNTIME_SESSION_TAG'

export function buildEnv(
  base: NodeJS.ProcessEnv,
  extra: Record<string, string>,
  tag: string,
): Record<string, string> {
  const env: Record<string, string> = {}
  const denied = new Set<string>(ENV_DENY_LIST)
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !denied.has(key)) env[key] = value
  }
  Object.assign(env, extra)
  env[SESSION_TAG_VAR] = tag
  return env
}
