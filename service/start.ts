import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { MemoryBus, NatsBus, type Bus, type NatsAuth } from '../bus/mod.ts'
import { buildGateway } from '../gateway/mod.ts'
import { startObservability } from '../observability/mod.ts'
import { approvalPolicy, createEngine, EngineSet, Runner, type Engine, type EngineSlot, type SessionSettings } from '../runner/mod.ts'
import { SessionSandbox } from '../runner/sandbox-exec/mod.ts'
import type { State } from '../state/mod.ts'
import type { Config } from './config/schema.ts'
import { engineList, observabilitySettings, securityOptions } from './config/slices.ts'
import { Lifecycle } from './lifecycle.ts'
import { gracefulShutdown } from './shutdown.ts'
import { awaitAssignment } from './assignment.ts'
import { openServiceState } from './state.ts'

export type Mode = 'dev' | 'gateway' | 'runner' | 'controller'

/** A started service: what `stop()` has to close, in order. */
export interface Service {
  readonly mode: Mode
  /** The HTTP address: the gateway's, or in runner mode its probe and metrics server's (runner.http_port). */
  readonly address?: string
  readonly bus: Bus
  /** Draining state and running work (service/lifecycle.ts); absent in controller mode. */
  readonly lifecycle?: Lifecycle
  /** The session registry, leases and event log this process uses; absent in controller mode. */
  readonly state?: State
  /** Stops at once (idempotent): every session's processes, then the server, then the bus. */
  stop(): Promise<void>
  /**
   * SIGTERM: drains (readiness 503, new work refused), lets running turns
   * finish within server.shutdown_grace, then stops. Aborting `signal` ends the
   * grace at once. Resolves true when nothing had to be cut short.
   */
  shutdown?(signal?: AbortSignal): Promise<boolean>
}

/** What the service knows beside its config. */
export interface StartOptions {
  /** The config file it was started with: hidden from every session. */
  configFile?: string | undefined
}

/** Starts the parts of `mode`: dev = gateway + runner on an in-process bus; gateway or runner alone over NATS. */
export async function startService(mode: Mode, config: Config, log: Logger, options: StartOptions = {}): Promise<Service> {
  // A sandbox pod with per-session credentials first waits for its session (and that session's credential).
  const assigned = mode === 'runner' && config.runner.placement === 'controller' ? await awaitAssignment(config, log) : undefined
  const bus: MemoryBus | NatsBus =
    assigned?.bus ??
    (mode === 'dev'
      ? new MemoryBus({ logger: log.child({ component: 'bus' }) })
      : await NatsBus.connect(config.nats.url, {
          name: `agent-runtime-${mode}-${os.hostname()}`,
          logger: log.child({ component: 'bus' }),
          auth: natsAuth(config.nats),
          inboxPrefix: config.nats.inbox_prefix,
        }))
  if (mode === 'controller') {
    // Loaded only here: the Kubernetes client is in the controller's image alone (Dockerfile.gateway, target controller).
    const { startControllerService } = await import('./controller.ts')
    return { mode, bus, ...(await startControllerService(config, bus, log)) }
  }
  const lifecycle = new Lifecycle()
  const observability = await startObservability({ mode, settings: observabilitySettings(config), log, bus, draining: () => lifecycle.draining })
  let runner: Runner | undefined
  let app: FastifyInstance | undefined
  let state: State | undefined
  try {
    // A session credential may only look the streams and buckets up: the gateways create them.
    state = await openServiceState(bus, config, log.child({ component: 'state' }), { create: assigned === undefined })
    if (mode !== 'gateway') {
      const settings = sessionSettings(config, { ...options, log: log.child({ component: 'sandbox' }), meter: (engine) => observability.meterEngine(engine) })
      observability.reportSandbox(await startSandbox(settings.engines, config, log))
      runner = new Runner({
        bus,
        state,
        runnerId: config.runner.id ?? defaultRunnerId(),
        maxSessions: config.runner.max_sessions,
        leaseTtlMs: config.state.lease_ttl,
        // Dev mode has one runner on in-memory state: a fence would end its turns with nobody to take them.
        soleRunner: mode === 'dev',
        subjectPrefix: config.nats.prefix,
        markerDir: path.resolve(config.session.marker_dir),
        settings,
        log: log.child({ component: 'runner' }),
        waf: config.waf,
        observer: observability.runnerObserver,
        onlySession: assigned?.sessionId,
      })
      await runner.start()
      assigned?.accept(runner.id)
      lifecycle.addWork(() => runner?.busySessions ?? 0)
      lifecycle.onDrain(() => runner?.drain())
    }
    let address: string | undefined
    if (mode !== 'runner') {
      app = await buildGateway({
        bus: observability.gatewayBus(bus),
        state,
        observability: observability.gateway,
        subjectPrefix: config.nats.prefix,
        requestTimeoutMs: config.nats.request_timeout,
        log,
        chat: config.chat,
        workBase: path.resolve(config.session.work_dir),
        lifecycle,
        security: securityOptions(config),
      })
      address = await app.listen({ port: config.server.port, host: config.server.host })
    } else address = await observability.serveRunner()
    log.info({ mode, address, bus: bus.kind, engines: engineList(config).engines.map((engine) => engine.name) }, 'agent runtime started')
    let stopping: Promise<void> | undefined
    const stop = () =>
      (stopping ??= (async () => {
        // Sessions first: their turns end with events that connected clients still receive, and no request waits on a turn.
        await runner?.close()
        await app?.close()
        await observability.stop()
        await state?.close()
        await assigned?.close()
        await bus.close()
      })())
    return {
      mode,
      bus,
      lifecycle,
      state,
      ...(address !== undefined && { address }),
      stop,
      shutdown: (signal) => gracefulShutdown({ lifecycle, graceMs: config.server.shutdown_grace, stop, log, ...(signal && { signal }) }),
    }
  } catch (err) {
    await app?.close().catch(() => {})
    await runner?.close().catch(() => {})
    await observability.stop().catch(() => {})
    await state?.close().catch(() => {})
    await assigned?.close().catch(() => {})
    await bus.close().catch(() => {})
    throw err
  }
}

export interface SessionSettingsOptions extends StartOptions {
  log?: Logger | undefined
  /** Wraps each engine (metrics: observability's meterEngine). */
  meter?: ((engine: Engine) => Engine) | undefined
}

export function sessionSettings(config: Config, options: SessionSettingsOptions = {}): SessionSettings {
  const { engines, default: defaultName } = engineList(config)
  const slots = engines.map((named): EngineSlot => {
    const env = { ...named.env }
    // As root Claude Code refuses bypassPermissions unless it is told it runs in a sandbox.
    if (named.type === 'claude' && named.permission_mode === 'bypassPermissions' && env.IS_SANDBOX === undefined) env.IS_SANDBOX = '1'
    const engine = createEngine(named)
    return {
      name: named.name,
      type: named.type,
      engine: options.meter ? options.meter(engine) : engine,
      env,
      approval: approvalPolicy(config.engine, named),
      sandbox: new SessionSandbox(
        {
          mode: config.sandbox.mode,
          forwarder: config.sandbox.forwarder,
          command: config.sandbox.command,
          stateDir: path.resolve(config.sandbox.state_dir),
          hide: [config.session.work_dir, config.session.marker_dir, options.configFile, config.nats.creds_file, ...config.sandbox.hide]
            .filter((p): p is string => p !== undefined)
            .map((p) => path.resolve(p)),
          network: config.engine.network,
          networkAllow: [...config.engine.network_allow, ...named.network_allow],
          engineEnv: env,
          engineCommand: named.command,
          engineArgs: named.args,
        },
        options.log,
      ),
    }
  })
  return {
    namespace: config.namespace,
    workBase: path.resolve(config.session.work_dir),
    workDirRoots: config.session.work_dir_roots,
    maxQueue: config.session.max_queue,
    turnTimeoutMs: config.engine.timeout,
    idleTimeoutMs: config.engine.idle_timeout,
    stopGraceMs: config.engine.stop_grace,
    engines: new EngineSet(slots, defaultName),
  }
}

/** Decides the sandbox once, at start: `bwrap` that cannot work fails the start; `auto` without bwrap runs unconfined, and says so loudly. */
async function startSandbox(engines: EngineSet, config: Config, log: Logger): Promise<'bwrap' | 'none'> {
  // Every engine's sandbox probes the same bwrap; the first answer stands for all.
  const [resolved] = await Promise.all([...engines].map((slot) => slot.sandbox.resolve()))
  if (!resolved) throw new Error('no engine is configured')
  if (resolved.mode === 'bwrap') {
    log.info({ sandbox: 'bwrap', network: config.engine.network, forwarder: resolved.forwarder }, 'sessions run in a bubblewrap sandbox')
    return 'bwrap'
  }
  if (config.sandbox.mode === 'none') {
    log.warn(
      { sandbox: 'none' },
      "SECURITY WARNING: sandbox.mode is none: agent CLIs run unconfined, with the service user's access to files, processes and the network",
    )
    return 'none'
  }
  log.warn(
    { sandbox: 'none', reason: resolved.reason },
    `SECURITY WARNING: no session sandbox (sandbox.mode auto, bubblewrap unusable: ${resolved.reason}). Agent CLIs run unconfined: a session can read other sessions, the service's files and reach its ports. Install bubblewrap (apt-get install bubblewrap) or set sandbox.mode: none to accept this.`,
  )
  return 'none'
}

/**
 * A runner's name when runner.id / RUNNER_ID is not set: host, pid and a random part (a container
 * restarted in place has the same host and pid, and must not pass for the runner it replaces).
 */
function defaultRunnerId(): string {
  return `${os.hostname().replace(/[^A-Za-z0-9_-]/g, '-')}-${process.pid}-${randomBytes(3).toString('hex')}`
}

/** The `nats` section's way to authenticate, if any (the schema allows at most one). */
export function natsAuth(nats: Config['nats']): NatsAuth | undefined {
  if (nats.user !== undefined && nats.password !== undefined) return { user: nats.user, password: nats.password }
  if (nats.token !== undefined) return { token: nats.token }
  if (nats.creds_file !== undefined) return { credsFile: nats.creds_file }
  return undefined
}
