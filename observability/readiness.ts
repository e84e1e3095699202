import { NatsBus, type Bus } from '../bus/mod.ts'
import { decodeReply, subjects } from '../contract/mod.ts'
import type { Engine } from '../runner/engine/engine.ts'

/** The checks of GET /health/ready (spec §2.7), plus `bus` where readiness asks only for NATS. */
export interface ReadinessChecks {
  /** The configured agent CLI was found and answers `--version`. */
  engine: boolean
  /** A runner is reachable. */
  pool: boolean
  /** The bus is connected (`server.readiness: bus`). */
  bus?: boolean
}

export type ReadinessCheck<C = ReadinessChecks> = () => Promise<C>

export interface ReadinessState<C = ReadinessChecks> {
  ready: boolean
  status: 'ready' | 'not_ready' | 'draining'
  checks: C
  /** The session sandbox in force where sessions run in this process (dev, runner): `none` says sessions are not confined. */
  sandbox?: 'bwrap' | 'none'
}

/** Which checks make a process ready, and what they read when the check itself throws. */
export interface ReadinessPolicy<C> {
  ready(checks: C): boolean
  failed: C
}

/** Runner, dev, and gateways outside Kubernetes: a runner answers and its CLI runs. */
export const RUNNER_READY: ReadinessPolicy<ReadinessChecks> = { ready: (c) => c.engine && c.pool, failed: { engine: false, pool: false } }

/**
 * Gateways in Kubernetes (`server.readiness: bus`): the controller makes runner
 * pods on demand, so none may exist yet (`warmPool: 0`) and a gateway that waited
 * for one would never be ready to ask. Ready = NATS connected; engine and pool
 * are still shown.
 */
export const BUS_READY: ReadinessPolicy<ReadinessChecks> = { ready: (c) => c.bus === true, failed: { engine: false, pool: false, bus: false } }

/** Whether a bus is connected (an in-process bus always is). */
export function busConnected(bus: Bus): boolean {
  return !(bus instanceof NatsBus) || bus.isConnected()
}

/** Longest wait for a runner's answer to the readiness ping (probes time out after ~1 s by default). */
export const PING_TIMEOUT_MS = 2_000

/**
 * Gateway (and dev) readiness over the bus, two requests to any runner (the
 * control subject's queue group): `ping` answered → a runner is reachable
 * (pool); `version` answered with a version for every configured engine →
 * their CLIs answer `--version` (engine; the runner caches the answers). A NATS bus that is down fails both
 * at once, without waiting for a time-out.
 */
export function busReadiness(bus: Bus, subjectPrefix: string, timeoutMs = PING_TIMEOUT_MS): ReadinessCheck {
  const control = subjects(subjectPrefix).control
  const ask = async (type: 'ping' | 'version'): Promise<boolean> => {
    try {
      const reply = await bus.request(control, JSON.stringify({ type }), { timeoutMs })
      const decoded = decodeReply(type, reply.data)
      // Every configured engine must answer, not only the default one.
      return !('engines' in decoded) || (decoded.engines ?? []).every((engine) => 'version' in engine)
    } catch {
      return false
    }
  }
  return async () => {
    if (!busConnected(bus)) return { engine: false, pool: false }
    const [pool, engine] = await Promise.all([ask('ping'), ask('version')])
    return { engine: pool && engine, pool }
  }
}

/** `busReadiness` plus the connection itself, for BUS_READY. */
export function busConnectionReadiness(bus: Bus, subjectPrefix: string, timeoutMs = PING_TIMEOUT_MS): ReadinessCheck {
  const runners = busReadiness(bus, subjectPrefix, timeoutMs)
  return async () => ({ bus: busConnected(bus), ...(await runners()) })
}

/** Runner readiness (its own HTTP server): every engine's CLI answers `--version`, and its bus is connected. */
export function runnerReadiness(engines: readonly Engine[], bus: Bus): ReadinessCheck {
  return async () => {
    const pool = busConnected(bus)
    const answered = await Promise.all(
      engines.map((engine) =>
        engine.version().then(
          () => true,
          () => false,
        ),
      ),
    )
    return { engine: answered.every(Boolean), pool }
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
export class Readiness<C = ReadinessChecks> {
  readonly #check: ReadinessCheck<C>
  readonly #policy: ReadinessPolicy<C>
  readonly #draining: () => boolean
  readonly #okTtlMs: number
  readonly #failTtlMs: number
  readonly #now: () => number
  readonly #sandbox: () => 'bwrap' | 'none' | undefined
  #last: { checks: C; ready: boolean; at: number } | undefined
  #inFlight: Promise<{ checks: C; ready: boolean }> | undefined

  constructor(check: ReadinessCheck<C>, policy: ReadinessPolicy<C>, options: ReadinessOptions = {}) {
    this.#check = check
    this.#policy = policy
    this.#draining = options.draining ?? (() => false)
    this.#okTtlMs = options.okTtlMs ?? 5_000
    this.#failTtlMs = options.failTtlMs ?? 1_000
    this.#now = options.now ?? Date.now
    this.#sandbox = options.sandbox ?? (() => undefined)
  }

  async state(): Promise<ReadinessState<C>> {
    const sandbox = this.#sandbox()
    const extra = sandbox === undefined ? {} : { sandbox }
    // Draining answers at once, with the last checks known: no new ping.
    if (this.#draining()) return { ready: false, status: 'draining', checks: this.#last?.checks ?? this.#policy.failed, ...extra }
    const { checks, ready } = await this.#checks()
    return { ready, status: ready ? 'ready' : 'not_ready', checks, ...extra }
  }

  #checks(): Promise<{ checks: C; ready: boolean }> {
    const last = this.#last
    if (last && this.#now() - last.at < (last.ready ? this.#okTtlMs : this.#failTtlMs)) return Promise.resolve(last)
    this.#inFlight ??= this.#check()
      .catch(() => this.#policy.failed)
      .then((checks) => {
        const result = { checks, ready: this.#policy.ready(checks) }
        this.#last = { ...result, at: this.#now() }
        this.#inFlight = undefined
        return result
      })
    return this.#inFlight
  }
}
