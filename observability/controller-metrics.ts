import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ControllerObserver, PodSummary } from '../controller/mod.ts'

/** What the controller's metrics read at scrape time (service/controller.ts adapts the controller). */
export interface ControllerView {
  /** True while this replica holds the Lease. */
  leading(): boolean
  /** The sandbox pods in this replica's cache: the leader's view; a standby watches none. */
  pods(): PodSummary
  /** `controller.warm_pool`. */
  readonly warmPoolTarget: number
}

/**
 * The controller's Prometheus metrics (controller/README.md "Metrics"), one
 * registry per controller, plus the default process metrics. Pod gauges are
 * read from the leader's cache at scrape time; a standby reports zeros and
 * `service_controller_leader 0`, so sums over replicas stay right.
 */
export class ControllerMetrics implements ControllerObserver {
  readonly registry = new Registry()
  readonly #duration = new Histogram({
    name: 'service_controller_reconcile_duration_seconds',
    help: 'Time of one reconcile pass (plan and API calls), leader only',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  })
  readonly #errors = new Counter({
    name: 'service_controller_reconcile_errors_total',
    help: 'Failures in reconcile passes: a session list, or an API call worth a back-off (conflicts are not errors)',
    registers: [this.registry],
  })

  constructor(view: ControllerView) {
    collectDefaultMetrics({ register: this.registry })
    new Gauge({
      name: 'service_controller_leader',
      help: '1 while this replica leads (reconciles and serves demand), else 0',
      registers: [this.registry],
      collect() {
        this.set(view.leading() ? 1 : 0)
      },
    })
    new Gauge({
      name: 'service_controller_warm_pool_target',
      help: 'Idle runner pods the controller keeps (controller.warm_pool)',
      registers: [this.registry],
      collect() {
        this.set(view.warmPoolTarget)
      },
    })
    new Gauge({
      name: 'service_controller_warm_pods',
      help: 'Warm sandbox pods a session can take now (Running, Ready, not being deleted)',
      registers: [this.registry],
      collect() {
        this.set(view.pods().warmReady)
      },
    })
    new Gauge({
      name: 'service_controller_pods',
      help: 'Sandbox pods of this pool by state (warm, cold, assigned) and phase',
      labelNames: ['state', 'phase'] as const,
      registers: [this.registry],
      collect() {
        for (const { state, phase, count } of view.pods().counts) this.labels(state, phase).set(count)
      },
    })
  }

  reconciled(seconds: number, errors: number): void {
    this.#duration.observe(seconds)
    if (errors > 0) this.#errors.inc(errors)
  }

  render(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
