import { z } from 'zod'
import { DurationField } from '../../config/fields.ts'
import { ControllerConfigSchema } from '../../controller/config.ts'
import { AuthConfigSchema, ChatConfigSchema, LimitsConfigSchema } from '../../gateway/mod.ts'
import { GatewayReadiness, OtelConfigSchema, RunnerHttpPort } from '../../observability/config.ts'
import { EngineConfigSchema, NamedEngineSchema, resolveEngines } from '../../runner/engine/config.ts'
import { SandboxConfigSchema } from '../../runner/sandbox-exec/config.ts'
import { WafConfigSchema } from '../../waf/rules.ts'
import { StateConfigSchema } from '../../state/config.ts'

/**
 * The configuration file's schema: every key, its type and default. Objects are
 * strict, so an unknown key is an error that names it. A section read by one
 * part is declared beside that part; the sections the service itself reads are here.
 */
const Duration = (fallback: string) => DurationField(fallback)

const Port = z.number().int().min(0).max(65535)

export const ConfigSchema = z
  .strictObject({
    /** Names this deployment in logs, traces and the CLI session id derivation. */
    namespace: z.string().min(1).default('default'),
    server: z
      .strictObject({
        port: Port.default(8080),
        host: z.string().min(1).default('127.0.0.1'),
        /** SIGTERM: how long running turns may go on before every session is stopped. */
        shutdown_grace: Duration('30s'),
        /** WebSocket ping period; a client that misses one pong is disconnected (0 = no pings). */
        ping_interval: Duration('30s'),
        /** Period of `task_boundary` pulses while a tool runs (0 = none). */
        task_pulse: Duration('30s'),
        /** The shape /ws/v1/agent speaks to a client that does not ask (`?dialect=`): `native`, or `hotplex` for HotPlex's clients. */
        ws_dialect: z.enum(['native', 'hotplex']).default('native'),
        /** A request (headers and body) not received in full within this is answered 408 REQUEST_TIMEOUT and its connection closed (0 = none). */
        request_timeout: Duration('30s'),
        /** Request line and headers not received within this: 408 REQUEST_TIMEOUT (at most `request_timeout`). */
        headers_timeout: DurationField('10s', { allowZero: false }),
        /** What gateway readiness waits for: a runner, or (Kubernetes) only NATS (observability/config.ts). */
        readiness: GatewayReadiness,
      })
      .prefault({}),
    /** The limits every session runs under, the default engine, and without `engines` the one agent CLI (runner/engine/config.ts). */
    engine: EngineConfigSchema.prefault({}),
    /** The named agent CLIs a session can run (README "Engines"); none: the `engine` section's own, `claude`. */
    engines: z.array(NamedEngineSchema).default([]),
    session: z
      .strictObject({
        work_dir: z.string().min(1).default('./data/sessions'),
        marker_dir: z.string().min(1).default('./data/markers'),
        /**
         * Absolute directories a client's absolute `work_dir` may lie in, used as it is (still
         * sandboxed, symlinks still checked); none by default: every work_dir is inside `work_dir`.
         */
        work_dir_roots: z.array(z.string().refine((root) => root.startsWith('/'), 'a work_dir root must be an absolute path')).default([]),
        /** Prompts that may wait behind a running turn. */
        max_queue: z.number().int().min(0).default(16),
      })
      .prefault({}),
    nats: z
      .strictObject({
        url: z.string().min(1).default('nats://127.0.0.1:4222'),
        /** Subject prefix, so several deployments can share one NATS. */
        prefix: z
          .string()
          .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/)
          .default('agent-runtime'),
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
        inbox_prefix: z
          .string()
          .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'NATS subject tokens: letters, digits, _, $ and -, joined by dots')
          .optional(),
      })
      .superRefine((nats, ctx) => {
        if ((nats.user === undefined) !== (nats.password === undefined)) {
          ctx.addIssue({ code: 'custom', path: [nats.user === undefined ? 'user' : 'password'], message: 'nats.user and nats.password go together' })
        }
        const ways = [nats.user !== undefined && 'user', nats.token !== undefined && 'token', nats.creds_file !== undefined && 'creds_file'].filter(Boolean)
        if (ways.length > 1)
          ctx.addIssue({ code: 'custom', path: [ways[1] as string], message: `choose one way to authenticate to NATS, not ${ways.join(' and ')}` })
      })
      .prefault({}),
    runner: z
      .strictObject({
        /** This runner's name in the session registry; RUNNER_ID, else host name and pid. */
        id: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, _ and - only')
          .optional(),
        /** Sessions this runner owns at most; a full runner takes no new ones. */
        max_sessions: z.number().int().min(1).default(100),
        /** Runner mode: port of the probe and /metrics server (observability/config.ts). */
        http_port: RunnerHttpPort,
        /**
         * How the runner gets sessions. `queue`: from the placement queue group while it has room.
         * `controller`: a sandbox pod with per-session credentials waits for the controller to assign it
         * one session and that session's credential (service/assignment.ts); its own credential
         * (nats.creds_file) reaches nothing else.
         */
        placement: z.enum(['queue', 'controller']).default('queue'),
      })
      .prefault({}),
    /** Where session state lives (state/config.ts). */
    state: StateConfigSchema.prefault({}),
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
    /** The WAF on prompts and tool calls (waf/README.md). */
    waf: WafConfigSchema.prefault({}),
    /** The kernel sandbox around each session's agent CLI (runner/sandbox-exec/). */
    sandbox: SandboxConfigSchema.prefault({}),
    /** OpenTelemetry traces (observability/config.ts); off unless `endpoint` is set. */
    otel: OtelConfigSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
    const resolved = resolveEngines(config.engine, config.engines)
    if ('problems' in resolved) for (const problem of resolved.problems) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message })
  })

export type Config = z.output<typeof ConfigSchema>
export type ConfigInput = z.input<typeof ConfigSchema>
