import { z } from 'zod'
import { DurationField } from '../../config/fields.ts'
import { EngineNetworkSchema, HostPortSchema } from '../sandbox-exec/config.ts'

/** The `engine` config section: which agent CLI runs each session, how, and for how long. */
export const EngineConfigSchema = z.strictObject({
  /** Which engine adapter drives the CLI. */
  type: z.enum(['claude']).default('claude'),
  command: z.string().min(1).default('claude'),
  /** Extra arguments put before the ones the engine adds. */
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  permission_mode: z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions']).default('bypassPermissions'),
  allowed_tools: z.array(z.string()).default([]),
  disallowed_tools: z.array(z.string()).default([]),
  model: z.string().min(1).optional(),
  /** Run the CLI with `--include-partial-messages`: clients get the answer as it is written (`answer_delta`, `thinking_delta`). */
  partial_messages: z.boolean().default(true),
  timeout: DurationField('5m'),
  idle_timeout: DurationField('30m'),
  /** Time between SIGTERM and SIGKILL when a session is stopped. */
  stop_grace: DurationField('3s'),
  /** What a sandboxed CLI may connect to: nothing, its model API (+ network_allow), or anything. */
  network: EngineNetworkSchema.default('allowlist'),
  /** More `host:port` a sandboxed CLI may reach with `network: allowlist`. */
  network_allow: z.array(HostPortSchema).default([]),
})

export type EngineConfig = z.output<typeof EngineConfigSchema>
