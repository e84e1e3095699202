import { z } from 'zod'
import { DurationField } from '../../config/fields.ts'
import { EngineName } from '../../contract/mod.ts'

/**
 * The `chat` section of the config file: the chat-platform adapter (spec §1,
 * §2.9). §1's `app_token` and `bot_token` are the two secrets under the names
 * the environment overrides (`SERVICE_CHAT_APP_TOKEN`, `SERVICE_CHAT_BOT_TOKEN`):
 * the app token is the AppSecret, the bot token is the robot's CallbackToken.
 * Each wins over its §2.9-named twin (`app_secret`, `callback_token`).
 */

/** A duration in the file, milliseconds once parsed; above 0. */
const DurationMs = (fallback: string) => DurationField(fallback, { allowZero: false })

const Text = z.string().min(1)

/** Smallest max_message_length: room for a `[999/999]` prefix and some text. */
export const MIN_MESSAGE_LENGTH = 32

const ChatFields = z.strictObject({
  enabled: z.boolean().default(false),
  /** AppSecret (spec §1 app-level token). Env: SERVICE_CHAT_APP_TOKEN. */
  app_token: Text.optional(),
  /** CallbackToken, the robot's signing secret (spec §1 bot token). Env: SERVICE_CHAT_BOT_TOKEN. */
  bot_token: Text.optional(),
  /** AppID: the `appKey` of the access-token call. */
  app_key: Text.optional(),
  /** AppSecret: the `appSecret` of the access-token call; `app_token` wins when both are set. */
  app_secret: Text.optional(),
  /** CallbackToken: HMAC key of the callback signature; `bot_token` wins when both are set. */
  callback_token: Text.optional(),
  /** CallbackKey: the encryption key of encrypted callbacks. Accepted; callbacks are read as plain JSON (see README). */
  callback_key: Text.optional(),
  /** {chat_api_url}: base URL of the platform API, e.g. https://api.chat.example. */
  api_url: z.url({ protocol: /^https?$/ }).optional(),
  /** Longest outbound message in Unicode code points, `[i/n]` prefix included. */
  max_message_length: z.number().int().min(MIN_MESSAGE_LENGTH).default(5000),
  /** Instructions for every chat session's agent (the turn's system prompt). */
  system_prompt: Text.optional(),
  /** The engine chat sessions run (an `engines` name); none: `engine.default`. */
  engine: EngineName.optional(),
  /** Reply body kind (spec §4.4). */
  message_format: z.enum(['text', 'markdown']).default('text'),
  /** `markdown.title` of markdown replies (the notification preview). */
  markdown_title: Text.default('Agent reply'),
  /** How far a callback's timestamp may be from the server clock, either way. */
  timestamp_window: DurationMs('5m'),
  /** How often idle sessions are swept (spec §8: 5 minutes). */
  sweep_interval: DurationMs('5m'),
  /** Inactivity after which a session is removed and its agent process freed (spec §8: 30 minutes). */
  idle_timeout: DurationMs('30m'),
  /** Tries of one outbound message on 429, 5xx and network failures, the first included. */
  send_attempts: z.number().int().min(1).max(10).default(4),
  /** First wait between tries; doubles each time, at most 30 s; a longer Retry-After wins. */
  retry_delay: DurationMs('1s'),
  /**
   * Longest wait for one agent turn before the sender is told it failed and
   * the key's next message goes ahead: a safety net for a lost runner (the
   * runner's engine.timeout normally ends a turn first).
   */
  turn_timeout: DurationMs('15m'),
  /** Time limit of one outbound HTTP request. */
  request_timeout: DurationMs('10s'),
  /**
   * The tenant the adapter's sessions belong to (`auth.tenants`): only its keys reach them on the other
   * surfaces. Default `default`, the tenant of `auth.api_key`/`api_keys`.
   */
  tenant: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a tenant id is 1 to 64 of A-Z a-z 0-9 _ . -')
    .default('default'),
})

type ChatFields = z.output<typeof ChatFields>

/** What the adapter runs with: the section with the secrets resolved and the required keys present. */
export type ChatSettings = Omit<ChatFields, 'enabled' | 'app_token' | 'bot_token' | 'app_key' | 'app_secret' | 'callback_token' | 'api_url'> & {
  enabled: true
  app_key: string
  app_secret: string
  callback_token: string
  api_url: string
}

const REQUIRED = [
  { key: 'app_key', hint: 'the AppID' },
  { key: 'app_secret', hint: 'set chat.app_secret, chat.app_token or SERVICE_CHAT_APP_TOKEN' },
  { key: 'callback_token', hint: 'set chat.callback_token, chat.bot_token or SERVICE_CHAT_BOT_TOKEN' },
  { key: 'api_url', hint: 'the chat platform API base URL' },
] as const

/** The `chat` config section; disabled it parses to `{enabled: false}`. */
export const ChatConfigSchema = ChatFields.transform((fields, ctx): { enabled: false } | ChatSettings => {
  if (!fields.enabled) return { enabled: false }
  const { app_token, bot_token, ...rest } = fields
  const resolved = { ...rest, app_secret: app_token ?? fields.app_secret, callback_token: bot_token ?? fields.callback_token }
  let missing = false
  for (const { key, hint } of REQUIRED) {
    if (resolved[key] !== undefined) continue
    missing = true
    ctx.addIssue({ code: 'custom', path: [key], message: `required when chat.enabled is true (${hint})` })
  }
  if (missing) return z.NEVER
  return resolved as ChatSettings
})

export type ChatConfig = z.output<typeof ChatConfigSchema>
export type ChatConfigInput = z.input<typeof ChatConfigSchema>
