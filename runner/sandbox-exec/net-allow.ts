import net from 'node:net'

/** One `host:port` a sandboxed CLI may reach; `host` is lower-case, an IPv6 address without brackets. */
export interface NetTarget {
  host: string
  port: number
}

/** The variables that name an engine's model API, in the order they are looked at. */
/** The engines' model API variables: Claude Code's, Gemini CLI's and the OpenAI SDKs' (Codex, OpenCode's openai provider). */
export const BASE_URL_VARS = [
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_BEDROCK_BASE_URL',
  'ANTHROPIC_VERTEX_BASE_URL',
  'GOOGLE_GEMINI_BASE_URL',
  'OPENAI_BASE_URL',
] as const

/** Where Claude Code goes when no base URL is set. */
export const DEFAULT_MODEL_API: NetTarget = { host: 'api.anthropic.com', port: 443 }

/** `host:port` (config form, `[v6]:port` allowed) as a target; undefined when it is not one. */
export function parseHostPort(text: string): NetTarget | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text.trim())
  if (!match) return undefined
  const port = Number(match[3])
  if (port < 1 || port > 65535) return undefined
  return { host: (match[1] ?? match[2]!).toLowerCase(), port }
}

/** The host and port a URL connects to (the scheme's default port when it has none). */
export function urlTarget(text: string): NetTarget | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  return { host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port }
}

/**
 * The allowlist of `engine.network: allowlist`: the engine's model API (from
 * its base URL variables, else api.anthropic.com:443) and `network_allow`.
 */
export function allowedTargets(env: Record<string, string | undefined>, extra: readonly string[]): NetTarget[] {
  const targets: NetTarget[] = []
  for (const name of BASE_URL_VARS) {
    const value = env[name]
    const target = value === undefined ? undefined : urlTarget(value)
    if (target) targets.push(target)
  }
  if (targets.length === 0) targets.push(DEFAULT_MODEL_API)
  for (const entry of extra) {
    const target = parseHostPort(entry)
    if (target) targets.push(target)
  }
  return dedupe(targets)
}

/** Whether the target is on this machine's loopback: inside the sandbox a forwarder must stand in for it at the same address. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (net.isIPv4(host)) return host.startsWith('127.')
  return host === '::1'
}

export function targetKey(target: NetTarget): string {
  return net.isIPv6(target.host) ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`
}

export function isAllowed(targets: readonly NetTarget[], host: string, port: number): boolean {
  const wanted = host.replace(/^\[|\]$/g, '').toLowerCase()
  return targets.some((target) => target.host === wanted && target.port === port)
}

function dedupe(targets: NetTarget[]): NetTarget[] {
  const seen = new Set<string>()
  return targets.filter((target) => {
    const key = targetKey(target)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
