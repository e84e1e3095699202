import { NatsBus, type Bus } from '../bus/mod.ts'
import { decodeReply, subjects } from '../contract/mod.ts'
import type { Engine } from '../runner/engine/engine.ts'

/** The two checks of GET /health/ready (spec §2.7). */
export interface ReadinessChecks {
  /** The configured agent CLI was found and answers `--version`. */
  engine: boolean
  /** A runner is reachable. */
  pool: boolean
}

export type ReadinessCheck = () => Promise<ReadinessChecks>

export interface ReadinessState {
  ready: boolean
  status: 'ready' | 'not_ready' | 'draining'
  checks: ReadinessChecks
  /** The session sandbox in force where sessions run in this process (dev, runner): `none` says sessions are not confined. */
  sandbox?: 'bwrap' | 'none'
}

/** Longest wait for a runner's answer to the readiness ping (probes time out after ~1 s by default). */
export const PING_TIMEOUT_MS = 2_000

/**
 * Gateway (and dev) readiness over the bus, two requests to any runner (the
 * control subject's queue group): `ping` answered → a runner is reachable
 * (pool); `version` answered with a version → its CLI answers `--version`
 * (engine; the runner caches the answer). A NATS bus that is down fails both
 * at once, without waiting for a time-out.
 */
export function busReadiness(bus: Bus, subjectPrefix: string, timeoutMs = PING_TIMEOUT_MS): ReadinessCheck {
  const control = subjects(subjectPrefix).control
  const ask = async (type: 'ping' | 'version'): Promise<boolean> => {
    try {
      const reply = await bus.request(control, JSON.stringify({ type }), { timeoutMs })
      decodeReply(type, reply.data)
      return true
    } catch {
      return false
    }
  }
  return async () => {
    if (bus instanceof NatsBus && !bus.isConnected()) return { engine: false, pool: false }
    const [pool, engine] = await Promise.all([ask('ping'), ask('version')])
    return { engine: pool && engine, pool }
  }
}

/** Runner readiness (its own HTTP server): its CLI answers `--version`, and its bus is connected. */
export function runnerReadiness(engine: Engine, bus: Bus): ReadinessCheck {
  return async () => {
    const pool = !(bus instanceof NatsBus) || bus.isConnected()
    const engineOk = await engine.version().then(
      () => true,
      () => false,
    )
    return { engine: engineOk, pool }
  }
}

export interface ReadinessOptions {
  /** True once the service drains (shutdown): not ready, whatever the checks say. */
  draining?: (() => boolean) | undefined
  /** How long a passing result is reused. */
  okTtlMs?: number
  /** How long a failing result is reused (short: recovery shows soon). */
  failTtlMs?: number
  now?: () => number
  /** The session sandbox in force, once known (dev and runner modes). */
  sandbox?: (() => 'bwrap' | 'none' | undefined) | undefined
}

/**
 * Readiness with its checks cached for a short time, so that frequent probes
 * from several orchestrators cost one ping per period; concurrent probes
 * share one check in flight.
 */
export class Readiness {
  readonly #check: ReadinessCheck
  readonly #draining: () => boolean
  readonly #okTtlMs: number
  readonly #failTtlMs: number
  readonly #now: () => number
  readonly #sandbox: () => 'bwrap' | 'none' | undefined
  #last: { checks: ReadinessChecks; at: number } | undefined
  #inFlight: Promise<ReadinessChecks> | undefined

  constructor(check: ReadinessCheck, options: ReadinessOptions = {}) {
    this.#check = check
    this.#draining = options.draining ?? (() => false)
    this.#okTtlMs = options.okTtlMs ?? 5_000
    this.#failTtlMs = options.failTtlMs ?? 1_000
    this.#now = options.now ?? Date.now
    this.#sandbox = options.sandbox ?? (() => undefined)
  }

  async state(): Promise<ReadinessState> {
    const sandbox = this.#sandbox()
    const extra = sandbox === undefined ? {} : { sandbox }
    // Draining answers at once, with the last checks known: no new ping.
    if (this.#draining()) return { ready: false, status: 'draining', checks: this.#last?.checks ?? { engine: false, pool: false }, ...extra }
    const checks = await this.#checks()
    const ready = checks.engine && checks.pool
    return { ready, status: ready ? 'ready' : 'not_ready', checks, ...extra }
  }

  #checks(): Promise<ReadinessChecks> {
    const last = this.#last
    if (last) {
      const ttl = last.checks.engine && last.checks.pool ? this.#okTtlMs : this.#failTtlMs
      if (this.#now() - last.at < ttl) return Promise.resolve(last.checks)
    }
    this.#inFlight ??= this.#check()
      .catch((): ReadinessChecks => ({ engine: false, pool: false }))
      .then((checks) => {
        this.#last = { checks, at: this.#now() }
        this.#inFlight = undefined
        return checks
      })
    return this.#inFlight
  }
}
