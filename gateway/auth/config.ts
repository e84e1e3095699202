import { z } from 'zod'
import { CommaList } from '../../config/fields.ts'
import { normalizeOrigin } from './origins.ts'

/** A key as it travels in a header or query: printable ASCII, no space, no comma (commas separate keys). */
const KEY = /^[\x21-\x2b\x2d-\x7e]+$/

const Keys = CommaList.superRefine((keys, ctx) => {
  for (const [index, key] of keys.entries()) {
    if (!KEY.test(key)) ctx.addIssue({ code: 'custom', path: [index], message: 'an API key must be printable ASCII without spaces or commas' })
  }
})

const Origins = CommaList.transform((origins, ctx) =>
  origins.map((origin, index) => {
    if (origin === '*') return origin
    const normal = normalizeOrigin(origin)
    if (normal === undefined) {
      ctx.addIssue({ code: 'custom', path: [index], message: `"${origin}" is not an origin (scheme://host[:port], or * for any)` })
      return z.NEVER
    }
    return normal
  }),
)

/**
 * The `auth` section (spec §5.1). Environment: SERVICE_API_KEY → `api_key`,
 * SERVICE_API_KEYS → `api_keys`, SERVICE_ALLOWED_ORIGINS → `allowed_origins`
 * (comma-separated). Every key of `api_key` and `api_keys` is accepted.
 */
export const AuthConfigSchema = z.strictObject({
  /** One API key. */
  api_key: Keys.optional(),
  /** Several API keys, so a key can be rotated without downtime. */
  api_keys: Keys.default([]),
  /** Browser origins allowed to open the WebSocket (and send HTTP requests); none by default, `*` for any. */
  allowed_origins: Origins.default([]),
})

export type AuthConfig = z.output<typeof AuthConfigSchema>

/** Every configured key, each once. */
export function configuredKeys(config: Pick<AuthConfig, 'api_key' | 'api_keys'>): string[] {
  return [...new Set([...(config.api_key ?? []), ...config.api_keys])]
}
