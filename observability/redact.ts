/**
 * No secret in a log line: two layers.
 * 1. pino `redact` censors fields known to hold secrets wherever a log call
 *    puts them (headers, config sections, environment dumps), up to three levels deep.
 * 2. A last pass over every serialized line replaces the values of the
 *    secrets this service was configured with (API keys, chat secrets, the
 *    engine's API key, a NATS password, …), so a secret inside a message
 *    text (an error quoting a URL, a CLI's stderr) is caught too, and masks
 *    the value of every `api_key=` URL parameter (a client's key, right or
 *    wrong, in a request URL: see redactApiKeyParams).
 */

export const REDACTED = '[REDACTED]'

/** Field names whose values are secrets, as they appear in headers, config sections and environments. */
const SECRET_FIELDS = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'x-acs-chat-access-token',
  'cookie',
  'set-cookie',
  'api_key',
  'api_keys',
  'apiKey',
  'token',
  'access_token',
  'accessToken',
  'app_token',
  'bot_token',
  'app_secret',
  'appSecret',
  'callback_token',
  'callback_key',
  'password',
  'secret',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'SERVICE_API_KEY',
  'SERVICE_API_KEYS',
  'SERVICE_CHAT_APP_TOKEN',
  'SERVICE_CHAT_BOT_TOKEN',
] as const

const segment = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `["${name}"]`)

/** pino `redact.paths`: each secret field at the top level and one or two objects down. */
export const LOG_REDACT_PATHS: readonly string[] = SECRET_FIELDS.flatMap((name) => {
  const tail = segment(name)
  return [tail.startsWith('.') ? tail.slice(1) : tail, `*${tail}`, `*.*${tail}`]
})

/** Config keys whose string values are secrets (any section, any depth). */
const SECRET_CONFIG_KEY = /^(api_keys?|app_token|bot_token|app_secret|callback_token|callback_key)$|(secret|token|password|passwd)$/i
/** Environment variable names whose values are secrets. */
const SECRET_ENV_NAME = /(API_?KEYS?|ACCESS_KEY|PRIVATE_KEY|SECRET_KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i
/** Shorter values are not scrubbed from text: they would blank out ordinary words. */
const MIN_SECRET_LENGTH = 6

/**
 * The secret values of a configuration and an environment: secret-named
 * config keys in any section (`auth.api_keys`, `chat.app_secret`, …),
 * secret-named variables of `engine.env` and of the environment, and the
 * password (or token) of the NATS URL.
 */
export function secretsOf(config: object, env: NodeJS.ProcessEnv = process.env): string[] {
  const found = new Set<string>()
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) found.add(value)
  }
  const walk = (node: unknown, key: string | undefined) => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, key)
      return
    }
    if (typeof node === 'object' && node !== null) {
      for (const [name, value] of Object.entries(node)) walk(value, name)
      return
    }
    if (key !== undefined && (SECRET_CONFIG_KEY.test(key) || SECRET_ENV_NAME.test(key))) add(node)
  }
  walk(config, undefined)
  for (const [name, value] of Object.entries(env)) if (SECRET_ENV_NAME.test(name)) add(value)
  const natsUrl = (config as { nats?: { url?: unknown } }).nats?.url
  if (typeof natsUrl === 'string') for (const part of urlCredentials(natsUrl)) add(part)
  return [...found]
}

/** The password of `scheme://user:password@host` (or the token of `scheme://token@host`), raw and decoded. */
function urlCredentials(text: string): string[] {
  const out: string[] = []
  for (const item of text.split(',')) {
    let url: URL
    try {
      url = new URL(item.trim())
    } catch {
      continue
    }
    const secret = url.password || url.username
    if (secret) out.push(secret, decodeURIComponent(secret))
  }
  return out
}

/** `api_key=` in a URL's query: what follows, up to the next parameter, quote, space or fragment. */
const API_KEY_PARAM = /([?&]api_key=)[^&#\s"'\\]*/gi

/**
 * A URL (or any text quoting one) with the value of each `api_key` parameter
 * replaced by `[REDACTED]`: clients may send their key in the query
 * (gateway/auth/credentials.ts), and a wrong key is no configured secret, yet
 * may be a real one mistyped. Pure.
 */
export function redactApiKeyParams(text: string): string {
  return /api_key=/i.test(text) ? text.replace(API_KEY_PARAM, `$1${REDACTED}`) : text
}

/**
 * A function that replaces each secret in a serialized log line by
 * `[REDACTED]` (as it is and as JSON escapes it), and masks `api_key=` URL
 * parameters (redactApiKeyParams).
 */
export function scrubber(secrets: readonly string[]): (line: string) => string {
  const needles = new Set<string>()
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue
    needles.add(secret)
    needles.add(JSON.stringify(secret).slice(1, -1))
  }
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...needles].sort((a, b) => b.length - a.length)
  return (line) => {
    let out = redactApiKeyParams(line)
    for (const needle of ordered) if (out.includes(needle)) out = out.replaceAll(needle, REDACTED)
    return out
  }
}
