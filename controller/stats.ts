/** Counters for tests, logs and the benchmark. */
export interface ControllerStats {
  passes: number
  created: number
  deleted: number
  assigned: number
  conflicts: number
  failures: number
}

/** All counters at zero. */
export const newStats = (): ControllerStats => ({ passes: 0, created: 0, deleted: 0, assigned: 0, conflicts: 0, failures: 0 })
