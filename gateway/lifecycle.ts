/**
 * What the gateway needs of the service's lifecycle (service/lifecycle.ts
 * implements it): whether it drains, so new turns and streams are refused,
 * and a way to report the running work a shutdown waits for.
 */
export interface GatewayLifecycle {
  /** True from the moment a shutdown began. */
  readonly draining: boolean
  /** Registers a count of running work; returns the unregister function. */
  addWork(count: () => number): () => void
}
