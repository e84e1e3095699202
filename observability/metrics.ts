import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The Prometheus metrics of spec §6.3, one registry per started service (so
 * several services in one process, as in tests, keep their own counts), plus
 * the default process metrics.
 *
 * Each metric is moved in exactly one part, so dev mode (gateway and runner in
 * one process, one registry) counts nothing twice and a split deployment has
 * each process expose what it does:
 *
 * | metric | moved by | where |
 * |---|---|---|
 * | service_sessions_active | an agent CLI process of a session starts / exits (ends, stop, close, idle reap, crash) | runner |
 * | service_sessions_total | the same starts, labelled `kind` = `new` or `resumed` conversation | runner |
 * | service_sessions_errors | each `error` event of a session, labelled `code` | runner |
 * | service_tools_invoked | each `tool_use` event, labelled `tool` | runner |
 * | service_dangers_blocked | each WAF block (dangerBlocked), labelled `category` | runner |
 * | service_request_duration_seconds | each HTTP request (route pattern, method, status) and WebSocket request frame | gateway |
 */
export class Metrics {
  readonly registry = new Registry()
  readonly #sessionsActive = new Gauge({
    name: 'service_sessions_active',
    help: 'Sessions whose agent CLI process runs on this runner now',
    registers: [this.registry],
  })
  readonly #sessionsTotal = new Counter({
    name: 'service_sessions_total',
    help: 'Session starts on this runner (an agent CLI process started for a new or a resumed conversation)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  })
  readonly #sessionErrors = new Counter({
    name: 'service_sessions_errors',
    help: 'Turns of sessions that ended in an error event, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  })
  readonly #toolsInvoked = new Counter({
    name: 'service_tools_invoked',
    help: 'Tool calls the agents made, by tool name',
    labelNames: ['tool'] as const,
    registers: [this.registry],
  })
  readonly #dangersBlocked = new Counter({
    name: 'service_dangers_blocked',
    help: 'Prompts and tool calls the WAF blocked, by rule category',
    labelNames: ['category'] as const,
    registers: [this.registry],
  })
  readonly #approvals = new Counter({
    name: 'service_approvals_total',
    help: 'Permission requests and questions settled: kind (permission, question), decision (allow_once, allow_always, deny, answer, reject), source (client, timeout, rule, turn_ended)',
    labelNames: ['kind', 'decision', 'source'] as const,
    registers: [this.registry],
  })
  readonly #approvalWait = new Histogram({
    name: 'service_approval_wait_seconds',
    help: 'How long a permission request or question waited for a person, by kind and source',
    labelNames: ['kind', 'source'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [this.registry],
  })
  readonly #requestDuration = new Histogram({
    name: 'service_request_duration_seconds',
    help: 'Time to answer a client request: HTTP by route pattern, WebSocket by request type',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  })

  constructor() {
    collectDefaultMetrics({ register: this.registry })
    // Counters without labels show from the start; labelled ones show their first sample.
    this.#sessionsTotal.labels('new').inc(0)
    this.#sessionsTotal.labels('resumed').inc(0)
  }

  /** An agent CLI process of a session started (`resumed`: it continues a stored conversation). */
  sessionStarted(resumed: boolean): void {
    this.#sessionsActive.inc()
    this.#sessionsTotal.labels(resumed ? 'resumed' : 'new').inc()
  }

  /** That process exited, for whatever reason. */
  sessionEnded(): void {
    this.#sessionsActive.dec()
  }

  sessionError(code: string): void {
    this.#sessionErrors.labels(code).inc()
  }

  toolInvoked(tool: string): void {
    this.#toolsInvoked.labels(boundedLabel(tool)).inc()
  }

  /** The WAF blocked a prompt or a tool call. */
  dangerBlocked(category: string): void {
    this.#dangersBlocked.labels(boundedLabel(category)).inc()
  }

  /** A permission request or question settled; `waitedMs` absent for a rule's decision (nobody waited). */
  approvalSettled(kind: 'permission' | 'question', decision: string, source: string, waitedMs: number | undefined): void {
    this.#approvals.labels(kind, decision, source).inc()
    if (waitedMs !== undefined) this.#approvalWait.labels(kind, source).observe(waitedMs / 1000)
  }

  /** One answered request; `route` is the pattern (`/session/:id`), never the raw URL. */
  requestDone(method: string, route: string, status: number, seconds: number): void {
    this.#requestDuration.labels(method, route, String(status)).observe(seconds)
  }

  /** The text exposition format, for GET /metrics. */
  render(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}

/** Label values come from agents (tool names) and config (categories): cut them short. */
function boundedLabel(value: string): string {
  return value.length > 64 ? value.slice(0, 64) : value
}
