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

/** The tenant of the plain keys (`api_key`, `api_keys`), and the one tenant of a service without keys. */
export const DEFAULT_TENANT = 'default'

/** A tenant id: short, printable, no separator a log or a key could confuse. */
const TenantId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a tenant id is 1 to 64 of A-Z a-z 0-9 _ . -')

/** A tenant: the sessions made with any of its keys are its own (README, Tenants). */
const Tenant = z.strictObject({
  id: TenantId,
  /** Its API keys, all valid at once (rotation, as with `api_keys`). */
  keys: Keys.refine((keys) => keys.length > 0, 'a tenant needs at least one key'),
})

/**
 * The `auth` section (spec §5.1). Environment: SERVICE_API_KEY → `api_key`,
 * SERVICE_API_KEYS → `api_keys`, SERVICE_ALLOWED_ORIGINS → `allowed_origins`
 * (comma-separated). Every key of `api_key` and `api_keys` is accepted.
 */
export const AuthConfigSchema = z
  .strictObject({
    /** One API key. */
    api_key: Keys.optional(),
    /** Several API keys, so a key can be rotated without downtime. */
    api_keys: Keys.default([]),
    /** Browser origins allowed to open the WebSocket (and send HTTP requests); none by default, `*` for any. */
    allowed_origins: Origins.default([]),
    /**
     * Tenants (file only): `[{id, keys: [...]}]`. A session belongs to the tenant whose key made it; the
     * keys of `api_key`/`api_keys` are the tenant `default`. Empty: one tenant, no ownership checks.
     */
    tenants: z.array(Tenant).default([]),
  })
  .superRefine((auth, ctx) => {
    const plain = new Set([...(auth.api_key ?? []), ...auth.api_keys])
    const ids = new Set<string>()
    const owners = new Map<string, string>()
    for (const [index, tenant] of auth.tenants.entries()) {
      if (ids.has(tenant.id)) ctx.addIssue({ code: 'custom', path: ['tenants', index, 'id'], message: `tenant "${tenant.id}" is listed twice` })
      if (tenant.id === DEFAULT_TENANT && plain.size > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['tenants', index, 'id'],
          message: `tenant id "${DEFAULT_TENANT}" is the tenant of auth.api_key/api_keys (SERVICE_API_KEY/S); give these keys there or choose another id`,
        })
      }
      ids.add(tenant.id)
      for (const [k, key] of tenant.keys.entries()) {
        const other = plain.has(key) ? DEFAULT_TENANT : owners.get(key)
        // One key, one tenant: otherwise whose sessions a request may touch would depend on the order of the list.
        if (other !== undefined && other !== tenant.id)
          ctx.addIssue({
            code: 'custom',
            path: ['tenants', index, 'keys', k],
            message: `this key is also a key of tenant "${other}"; a key belongs to one tenant`,
          })
        owners.set(key, tenant.id)
      }
    }
  })

export type AuthConfig = z.output<typeof AuthConfigSchema>

/** Every configured key, each once (tenants' keys included). */
export function configuredKeys(config: Pick<AuthConfig, 'api_key' | 'api_keys'> & { tenants?: AuthConfig['tenants'] }): string[] {
  return tenantKeys(config).map((one) => one.key)
}

/** Every configured key with its tenant, each key once: the plain keys first (tenant `default`), then each tenant's. */
export function tenantKeys(config: Pick<AuthConfig, 'api_key' | 'api_keys'> & { tenants?: AuthConfig['tenants'] }): { key: string; tenant: string }[] {
  const seen = new Set<string>()
  const found: { key: string; tenant: string }[] = []
  const add = (key: string, tenant: string) => {
    if (seen.has(key)) return
    seen.add(key)
    found.push({ key, tenant })
  }
  for (const key of [...(config.api_key ?? []), ...config.api_keys]) add(key, DEFAULT_TENANT)
  for (const tenant of config.tenants ?? []) for (const key of tenant.keys) add(key, tenant.id)
  return found
}

/** True when sessions are owned by tenants: at least one tenant is configured in `auth.tenants`. */
export function tenancyEnabled(config: Pick<AuthConfig, 'tenants'>): boolean {
  return config.tenants.length > 0
}
