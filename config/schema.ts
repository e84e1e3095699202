import { z } from 'zod'
import { ChatConfigSchema } from '../gateway/chat/config.ts'
import { OtelConfigSchema, RunnerHttpPort } from '../observability/config.ts'
import { ControllerConfigSchema } from '../controller/config.ts'
import { WafConfigSchema } from '../runner/waf/rules.ts'
import { EngineNetworkSchema, HostPortSchema, SandboxConfigSchema } from '../runner/sandbox-exec/config.ts'
import { AuthConfigSchema } from '../gateway/auth/config.ts'
import { LimitsConfigSchema } from '../gateway/limits/config.ts'
import { ServerTimingShape } from '../service/server-config.ts'
import { DurationField } from './fields.ts'

/**
 * The configuration file's schema: every key, its type and default. Objects are
 * strict, so an unknown key is an error that names it.
 */
const Duration = (fallback: string) => DurationField(fallback)

const Port = z.number().int().min(0).max(65535)

export const ConfigSchema = z.strictObject({
  /** Names this deployment in logs, traces and the CLI session id derivation. */
  namespace: z.string().min(1).default('default'),
  server: z
    .strictObject({
      port: Port.default(8080),
      host: z.string().min(1).default('127.0.0.1'),
      ...ServerTimingShape,
    })
    .prefault({}),
  engine: z
    .strictObject({
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
      timeout: Duration('5m'),
      idle_timeout: Duration('30m'),
      /** Time between SIGTERM and SIGKILL when a session is stopped. */
      stop_grace: Duration('3s'),
      /** What a sandboxed CLI may connect to: nothing, its model API (+ network_allow), or anything. */
      network: EngineNetworkSchema.default('allowlist'),
      /** More `host:port` a sandboxed CLI may reach with `network: allowlist`. */
      network_allow: z.array(HostPortSchema).default([]),
    })
    .prefault({}),
  session: z
    .strictObject({
      work_dir: z.string().min(1).default('./data/sessions'),
      marker_dir: z.string().min(1).default('./data/markers'),
      /** Prompts that may wait behind a running turn. */
      max_queue: z.number().int().min(0).default(16),
    })
    .prefault({}),
  nats: z
    .strictObject({
      url: z.string().min(1).default('nats://127.0.0.1:4222'),
      /** Subject prefix, so several deployments can share one NATS. */
      prefix: z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/).default('agent-runtime'),
      request_timeout: Duration('30s'),
      /** User and password for a server with `authorization` users (NATS_USER, NATS_PASSWORD). */
      user: z.string().min(1).optional(),
      password: z.string().min(1).optional(),
      /** A server's authorization token (NATS_TOKEN). */
      token: z.string().min(1).optional(),
      /** A `.creds` file (user JWT and NKey seed) for decentralized JWT auth (NATS_CREDS). */
      creds_file: z.string().min(1).optional(),
      /**
       * The client's reply inbox prefix (NATS_INBOX_PREFIX); default `_INBOX`. With per-role
       * permissions each user gets its own (contract/permissions.ts), so none reads another's replies.
       */
      inbox_prefix: z.string().regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'NATS subject tokens: letters, digits, _, $ and -, joined by dots').optional(),
    })
    .superRefine((nats, ctx) => {
      if ((nats.user === undefined) !== (nats.password === undefined)) {
        ctx.addIssue({ code: 'custom', path: [nats.user === undefined ? 'user' : 'password'], message: 'nats.user and nats.password go together' })
      }
      const ways = [nats.user !== undefined && 'user', nats.token !== undefined && 'token', nats.creds_file !== undefined && 'creds_file'].filter(Boolean)
      if (ways.length > 1) ctx.addIssue({ code: 'custom', path: [ways[1] as string], message: `choose one way to authenticate to NATS, not ${ways.join(' and ')}` })
    })
    .prefault({}),
  runner: z
    .strictObject({
      /** This runner's name in the session registry; RUNNER_ID, else host name and pid. */
      id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, _ and - only').optional(),
      /** Sessions this runner owns at most; a full runner takes no new ones. */
      max_sessions: z.number().int().min(1).default(100),
      /** Runner mode: port of the probe and /metrics server (observability/config.ts). */
      http_port: RunnerHttpPort,
    })
    .prefault({}),
  /** Where session state lives: memory (dev) or NATS JetStream (production). */
  state: z
    .strictObject({
      /** `auto`: memory in dev mode, JetStream in gateway and runner modes. */
      backend: z.enum(['auto', 'memory', 'jetstream']).default('auto'),
      /** JetStream storage of the event stream and buckets. */
      storage: z.enum(['file', 'memory']).default('file'),
      replicas: z.number().int().min(1).max(5).default(1),
      /** How long events are kept for replay. */
      event_max_age: Duration('24h'),
      /** Events kept per session (older ones are dropped first). */
      events_per_session: z.number().int().min(10).default(10_000),
      /** Bytes the event stream may hold in all (-1 = no limit). */
      event_max_bytes: z.number().int().min(-1).default(-1),
      /** A runner that has not renewed its lease for this long is dead; its sessions are claimable. */
      lease_ttl: Duration('10s'),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    })
    .prefault({}),
  /** API keys and allowed browser origins (README "Security and limits"). */
  auth: AuthConfigSchema.prefault({}),
  /** Body, frame, session and rate limits (README "Security and limits"). */
  limits: LimitsConfigSchema.prefault({}),
  /** The chat-platform adapter (gateway/chat/README.md). */
  chat: ChatConfigSchema.prefault({}),
  /** The sandbox controller (controller/README.md); read by `agent-runtime controller` only. */
  controller: ControllerConfigSchema.prefault({}),
  /** The WAF on prompts and tool calls (runner/waf/README.md). */
  waf: WafConfigSchema.prefault({}),
  /** The kernel sandbox around each session's agent CLI (runner/sandbox-exec/). */
  sandbox: SandboxConfigSchema.prefault({}),
  /** OpenTelemetry traces (observability/config.ts); off unless `endpoint` is set. */
  otel: OtelConfigSchema.prefault({}),
})

export type Config = z.output<typeof ConfigSchema>
export type ConfigInput = z.input<typeof ConfigSchema>
