import type { Logger } from 'pino'
import type { Bus } from '../bus/mod.ts'
import { SERVICE_VERSION } from '../contract/version.ts'
import type { GatewayObserver } from '../gateway/mod.ts'
import type { Engine } from '../runner/engine/engine.ts'
import type { RunnerObserver } from '../runner/mod.ts'
import { registerHealthRoutes } from './health-routes.ts'
import { meterEngine } from './metered-engine.ts'
import { Metrics } from './metrics.ts'
import type { ObservabilitySettings } from './config.ts'
import { BUS_READY, busConnectionReadiness, busReadiness, Readiness, RUNNER_READY, runnerReadiness } from './readiness.ts'
import { startProbeServer } from './probe-server.ts'
import { recordRequestDurations, wsRoute } from './request-metrics.ts'
import { createRunnerObserver } from './runner-observer.ts'
import { TracedBus } from './traced-bus.ts'
import type { Tracing } from './spans.ts'
import { startTracing } from './tracing.ts'
import { TurnSpans } from './turn-spans.ts'

export interface ObservabilityOptions {
  mode: 'dev' | 'gateway' | 'runner'
  settings: ObservabilitySettings
  log: Logger
  /** The service's bus as it is: readiness pings go on it untraced. */
  bus: Bus
  /** True once the service drains (service/lifecycle.ts): readiness turns 503. */
  draining?: (() => boolean) | undefined
}

/** Metrics, traces and probes of one started service (see README, Observability). */
export interface Observability {
  readonly metrics: Metrics
  /** Undefined when tracing is off. */
  readonly tracing: Tracing | undefined
  /** Runner: the engine, counting sessions as their CLI processes start and exit. */
  meterEngine(engine: Engine): Engine
  /** Runner (dev, runner modes): the session sandbox in force, shown on /health/ready. */
  reportSandbox(mode: 'bwrap' | 'none'): void
  /** Runner: what it reports (each command, event and WAF block). */
  readonly runnerObserver: RunnerObserver
  /** Gateway: the bus to send commands on (carrying the trace context when tracing is on). */
  gatewayBus(bus: Bus): Bus
  /** Gateway: probes, /metrics, request timing. */
  readonly gateway: GatewayObserver
  /** Runner mode: starts the runner's probe and metrics server when `runner.http_port` is set; its address. */
  serveRunner(): Promise<string | undefined>
  /** Ends open spans, exports them, closes the runner's server. */
  stop(): Promise<void>
}

export async function startObservability(options: ObservabilityOptions): Promise<Observability> {
  const { mode, settings, log, bus } = options
  const startedAt = Date.now()
  const metrics = new Metrics()
  const tracing = await startTracing(settings.otel, { version: SERVICE_VERSION, namespace: settings.namespace, mode }, log)
  const spans = tracing && mode !== 'gateway' ? new TurnSpans(tracing, settings.namespace) : undefined
  const runnerObserver = createRunnerObserver({ metrics, spans, log: log.child({ component: 'runner' }) })
  const engines: Engine[] = []
  let readiness: Readiness | undefined
  let sandbox: 'bwrap' | 'none' | undefined
  const readinessOptions = { draining: options.draining, sandbox: () => sandbox }
  const readinessFor = () => {
    if (mode === 'runner')
      readiness ??= new Readiness(engines.length > 0 ? runnerReadiness(engines, bus) : async () => RUNNER_READY.failed, RUNNER_READY, readinessOptions)
    else if (settings.readiness === 'bus') readiness ??= new Readiness(busConnectionReadiness(bus, settings.subjectPrefix), BUS_READY, readinessOptions)
    else readiness ??= new Readiness(busReadiness(bus, settings.subjectPrefix), RUNNER_READY, readinessOptions)
    return readiness
  }
  const routes = { metrics, version: SERVICE_VERSION, startedAt }
  let runnerHttp: { close(): Promise<void> } | undefined

  return {
    metrics,
    tracing,
    meterEngine(inner) {
      engines.push(inner)
      return meterEngine(inner, metrics)
    },
    reportSandbox(mode) {
      sandbox = mode
    },
    runnerObserver,
    gatewayBus: (inner) => (tracing ? new TracedBus(inner, tracing, settings.namespace) : inner),
    gateway: {
      register(app) {
        recordRequestDurations(app, metrics)
        registerHealthRoutes(app, { ...routes, readiness: readinessFor() })
      },
      wsRequest(path, type, status, seconds) {
        metrics.requestDone('WS', wsRoute(path, type), status, seconds)
      },
    },
    async serveRunner() {
      const port = settings.httpPort
      if (port === undefined) return undefined
      const server = await startProbeServer({
        port,
        host: settings.host,
        log,
        component: 'runner-http',
        register(app) {
          recordRequestDurations(app, metrics)
          registerHealthRoutes(app, { ...routes, readiness: readinessFor() })
        },
      })
      runnerHttp = server.app
      return server.address
    },
    async stop() {
      await runnerHttp?.close()
      spans?.endAll()
      await tracing?.shutdown()
    },
  }
}
