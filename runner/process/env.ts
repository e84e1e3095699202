/**
 * The environment an agent CLI gets: an allowlist of the service's own
 * variables (what a CLI needs to run: PATH, locale, HOME, the terminal, the
 * time zone, TLS roots, proxies, and the engine's own ANTHROPIC_* / CLAUDE_*
 * variables), plus the configured `engine.env`, plus the session tag. Nothing
 * else of the service's environment reaches the agent: not SERVICE_*, not
 * NATS_*, not chat tokens, not anything a deployment adds later.
 */
export const ENV_ALLOW_NAMES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'TZ',
  // TLS roots and proxies of the machine (a corporate proxy is how some hosts reach the model API).
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  // Claude Code's own switches that do not carry its prefixes.
  'IS_SANDBOX',
  'DISABLE_TELEMETRY',
  'DISABLE_AUTOUPDATER',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_BUG_COMMAND',
  'DISABLE_COST_WARNINGS',
  'DISABLE_NON_ESSENTIAL_MODEL_CALLS',
  'MAX_THINKING_TOKENS',
  'BASH_DEFAULT_TIMEOUT_MS',
  'BASH_MAX_TIMEOUT_MS',
  'BASH_MAX_OUTPUT_LENGTH',
  'MCP_TIMEOUT',
  'MCP_TOOL_TIMEOUT',
  'USE_BUILTIN_RIPGREP',
] as const

/** Prefixes of allowed names: locale categories and the engine's own variables. */
export const ENV_ALLOW_PREFIXES = ['LC_', 'ANTHROPIC_', 'CLAUDE_'] as const

/** Every process of a session carries this variable, so its descendants can be found even after they are reparented. */
export const SESSION_TAG_VAR = 'AGENT_RUNTIME_SESSION_TAG'

const ALLOWED = new Set<string>(ENV_ALLOW_NAMES)

/** Whether a variable of the service's environment may reach the agent CLI. */
export function envAllowed(name: string): boolean {
  return ALLOWED.has(name) || ENV_ALLOW_PREFIXES.some((prefix) => name.startsWith(prefix))
}

/** The allowed part of `base`, then `extra` (engine.env and the runner's own additions) over it, then the tag. */
export function buildEnv(base: NodeJS.ProcessEnv, extra: Record<string, string>, tag: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && envAllowed(key)) env[key] = value
  }
  Object.assign(env, extra)
  env[SESSION_TAG_VAR] = tag
  return env
}
