import { readFile } from 'node:fs/promises'
import { parse as parseYaml, YAMLParseError } from 'yaml'
import type { z } from 'zod'
import { ConfigSchema, type Config } from './schema.ts'

/** A configuration that cannot be used; the message names the key. Exit code 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  readonly exitCode = 2
}

/** Environment variables that override config keys (they win over the file). */
const ENV_KEYS: Record<string, { path: readonly string[]; type: 'string' | 'int' }> = {
  SERVICE_PORT: { path: ['server', 'port'], type: 'int' },
  SERVICE_HOST: { path: ['server', 'host'], type: 'string' },
  NATS_URL: { path: ['nats', 'url'], type: 'string' },
  NATS_USER: { path: ['nats', 'user'], type: 'string' },
  NATS_PASSWORD: { path: ['nats', 'password'], type: 'string' },
  NATS_TOKEN: { path: ['nats', 'token'], type: 'string' },
  NATS_CREDS: { path: ['nats', 'creds_file'], type: 'string' },
  NATS_INBOX_PREFIX: { path: ['nats', 'inbox_prefix'], type: 'string' },
  LOG_LEVEL: { path: ['log', 'level'], type: 'string' },
  RUNNER_ID: { path: ['runner', 'id'], type: 'string' },
  RUNNER_PLACEMENT: { path: ['runner', 'placement'], type: 'string' },
  SERVICE_API_KEY: { path: ['auth', 'api_key'], type: 'string' },
  SERVICE_API_KEYS: { path: ['auth', 'api_keys'], type: 'string' },
  SERVICE_ALLOWED_ORIGINS: { path: ['auth', 'allowed_origins'], type: 'string' },
  SERVICE_CHAT_APP_TOKEN: { path: ['chat', 'app_token'], type: 'string' },
  SERVICE_CHAT_BOT_TOKEN: { path: ['chat', 'bot_token'], type: 'string' },
  RUNNER_HTTP_PORT: { path: ['runner', 'http_port'], type: 'int' },
  CONTROLLER_HTTP_PORT: { path: ['controller', 'http_port'], type: 'int' },
  SERVICE_READINESS: { path: ['server', 'readiness'], type: 'string' },
  OTEL_ENDPOINT: { path: ['otel', 'endpoint'], type: 'string' },
  OTEL_SERVICE_NAME: { path: ['otel', 'service_name'], type: 'string' },
  OTEL_SAMPLING_RATE: { path: ['otel', 'sampling_rate'], type: 'string' },
}

/** Reads the YAML file (when given), applies the environment, validates everything. */
export async function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  let raw: unknown = {}
  if (file !== undefined) {
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      throw new ConfigError(`config: cannot read ${file}: ${(err as Error).message}`, { cause: err })
    }
    raw = parseConfigText(text, file)
  }
  return resolveConfig(raw, env)
}

export function parseConfigText(text: string, file: string): unknown {
  try {
    return parseYaml(text) ?? {}
  } catch (err) {
    const detail = err instanceof YAMLParseError ? err.message.split('\n')[0] : String(err)
    throw new ConfigError(`config: ${file} is not valid YAML: ${detail}`, { cause: err })
  }
}

/** Validates a parsed document plus environment overrides into a Config. */
export function resolveConfig(raw: unknown, env: NodeJS.ProcessEnv = process.env): Config {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError('config: the file must hold a YAML mapping of sections (server, engine, session, …)')
  }
  const doc = structuredClone(raw) as Record<string, unknown>
  for (const [name, { path, type }] of Object.entries(ENV_KEYS)) {
    const value = env[name]
    if (value === undefined || value === '') continue
    let parsed: string | number = value
    if (type === 'int') {
      if (!/^\d+$/.test(value)) throw new ConfigError(`config: ${name}: expected an integer, got "${value}"`)
      parsed = Number(value)
    }
    setPath(doc, path, parsed)
  }
  const result = ConfigSchema.safeParse(doc)
  if (!result.success) throw new ConfigError(describeIssues(result.error))
  return result.data
}

function setPath(doc: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = doc
  for (const key of path.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== 'object' || next === null) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path.at(-1)!] = value
}

function describeIssues(error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${[...issue.path, key].join('.')}: unknown key`).join('\n')
    }
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)'
    return `${where}: ${issue.message}`
  })
  return `config: ${lines.join('\n')}`
}
