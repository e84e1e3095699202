/** What the controller reports as it works (observability implements it: the controller's /metrics). */
export interface ControllerObserver {
  /** One reconcile pass ended after `seconds`; `errors` counts what failed in it (a session list, API calls worth a back-off). */
  reconciled(seconds: number, errors: number): void
}
