import { z } from 'zod'
import { EngineName } from '../../contract/commands.ts'
import { DurationField } from '../../config/fields.ts'
import { EngineNetworkSchema, HostPortSchema } from '../sandbox-exec/config.ts'
import { ApprovalDefaultFields, EngineApprovalFields } from '../steering/config.ts'

/** What every engine's CLI is started with. */
const CliFields = {
  command: z.string().min(1),
  /** Extra arguments put before the ones the engine adds. */
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  model: z.string().min(1).optional(),
  /** More `host:port` this engine's sandboxed CLI may reach with `engine.network: allowlist` (beside `engine.network_allow`). */
  network_allow: z.array(HostPortSchema).default([]),
  /** Whether its tool calls go to a person (runner/steering/config.ts); absent: the `engine.approval*` defaults. */
  ...EngineApprovalFields,
}

/** An ACP agent's fields: the common ones without `model` (ACP has no common way to pick one). */
const { model: _model, ...AcpCliFields } = CliFields

const PermissionMode = z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions'])

/** Claude Code's own settings (runner/engine/claude/args.ts). */
const ClaudeFields = {
  permission_mode: PermissionMode.default('bypassPermissions'),
  allowed_tools: z.array(z.string()).default([]),
  disallowed_tools: z.array(z.string()).default([]),
  /** Run the CLI with `--include-partial-messages`: clients get the answer as it is written (`answer_delta`, `thinking_delta`). */
  partial_messages: z.boolean().default(true),
}

/** One entry of `engines`: a named agent CLI a session can run. */
export const NamedEngineSchema = z.discriminatedUnion('type', [
  z.strictObject({ name: EngineName, type: z.literal('claude'), ...CliFields, ...ClaudeFields }),
  /** Codex over `codex app-server` (runner/engine/codex/); its model provider goes in `args` (`-c` flags) or a config.toml in CODEX_HOME. */
  z.strictObject({ name: EngineName, type: z.literal('codex'), ...CliFields }),
  /**
   * OpenCode as `opencode run --format json`, a process per turn (runner/engine/opencode/); `model` is `provider/model`;
   * its provider goes in `env.OPENCODE_CONFIG_CONTENT` (a JSON object; the engine adds its tool gate plugin), its
   * model API in `network_allow` (the sandbox does not read it from that JSON).
   */
  z.strictObject({ name: EngineName, type: z.literal('opencode'), ...CliFields }),
  /**
   * Any Agent Client Protocol agent on its stdio (runner/engine/acp/): `command`/`args` start it in ACP mode
   * (`gemini --acp`, `claude-code-acp`, `codex-acp`). No `model`: each agent takes it its own way (an arg, its
   * env, its config file). Its model API goes in `network_allow` unless it is an `ANTHROPIC_BASE_URL`.
   */
  z.strictObject({ name: EngineName, type: z.literal('acp'), ...AcpCliFields }),
])
export type NamedEngine = z.output<typeof NamedEngineSchema>
export type EngineType = NamedEngine['type']

/** The section's own engine fields: without defaults, so that setting one beside `engines` can be told apart and refused. */
const SectionEngineFields = {
  type: z.enum(['claude']).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  model: z.string().min(1).optional(),
  permission_mode: PermissionMode.optional(),
  allowed_tools: z.array(z.string()).optional(),
  disallowed_tools: z.array(z.string()).optional(),
  partial_messages: z.boolean().optional(),
}
export const SECTION_ENGINE_KEYS = Object.keys(SectionEngineFields) as (keyof typeof SectionEngineFields)[]

/**
 * The `engine` section: the limits every engine's sessions run under, which
 * engine a session runs when it names none, and, when `engines` is empty, the
 * one engine itself (Claude Code, named `claude`, with the fields above).
 */
export const EngineConfigSchema = z.strictObject({
  /** The engine a session runs when its first turn names none (an `engines` name); none: the first engine. */
  default: EngineName.optional(),
  ...SectionEngineFields,
  timeout: DurationField('5m'),
  idle_timeout: DurationField('30m'),
  /** Time between SIGTERM and SIGKILL when a session is stopped. */
  stop_grace: DurationField('3s'),
  /** What a sandboxed CLI may connect to: nothing, its model API (+ network_allow), or anything. */
  network: EngineNetworkSchema.default('allowlist'),
  /** More `host:port` every sandboxed CLI may reach with `network: allowlist`. */
  network_allow: z.array(HostPortSchema).default([]),
  /** Approval (steering) defaults every engine takes unless its `engines` entry sets its own. */
  ...ApprovalDefaultFields,
})

export type EngineConfig = z.output<typeof EngineConfigSchema>

/** The engines a service runs, the default one first. */
export interface EngineList {
  engines: NamedEngine[]
  /** The name of the engine a session runs when it names none. */
  default: string
}

/**
 * The engines of a config: `engines` when it lists any, else the `engine`
 * section's own (named `claude`). Problems are returned as messages with the
 * config path they concern, for the config loader to report.
 */
export function resolveEngines(
  section: EngineConfig,
  listed: readonly NamedEngine[],
): EngineList | { problems: { path: (string | number)[]; message: string }[] } {
  const problems: { path: (string | number)[]; message: string }[] = []
  let engines: NamedEngine[]
  if (listed.length === 0) {
    engines = [
      NamedEngineSchema.parse({
        name: section.type ?? 'claude',
        type: section.type ?? 'claude',
        command: section.command ?? 'claude',
        ...Object.fromEntries(
          SECTION_ENGINE_KEYS.filter((key) => key !== 'type' && key !== 'command' && section[key] !== undefined).map((key) => [key, section[key]]),
        ),
      }),
    ]
  } else {
    engines = [...listed]
    for (const key of SECTION_ENGINE_KEYS) {
      if (section[key] !== undefined)
        problems.push({
          path: ['engine', key],
          message: `engine.${key} describes the one engine of a config without \`engines\`; with \`engines\`, set it in an engines entry`,
        })
    }
    const seen = new Set<string>()
    listed.forEach((engine, index) => {
      if (seen.has(engine.name)) problems.push({ path: ['engines', index, 'name'], message: `the engine name "${engine.name}" is used twice` })
      seen.add(engine.name)
    })
  }
  const fallback = engines[0]!.name
  const chosen = section.default ?? fallback
  if (!engines.some((engine) => engine.name === chosen)) {
    problems.push({
      path: ['engine', 'default'],
      message: `engine.default "${chosen}" names no engine (configured: ${engines.map((engine) => engine.name).join(', ')})`,
    })
  }
  return problems.length > 0 ? { problems } : { engines, default: chosen }
}
