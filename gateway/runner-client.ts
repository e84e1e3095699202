import { setTimeout as sleep } from 'node:timers/promises'
import { BusNoRespondersError, BusTimeoutError, type Bus, type BusMessage } from '../bus/mod.ts'
import { decodeReply, RUNNER_HEADER, ServiceError, subjects, type Command, type ReplyOf, type Subjects } from '../contract/mod.ts'
import { isRunnerAlive, type RunnerLeases, type SessionRegistry } from '../state/mod.ts'
import { requestColdPod } from './cold-start.ts'
import type { Runners } from './runners.ts'

/** Routing hops for one command: owner gone → placement → told the owner → … */
const MAX_HOPS = 5
const PING_TIMEOUT_MS = 1_000
/** Owners remembered at most; the oldest entries go first (a miss only costs a trip through placement). */
const MAX_REMEMBERED_OWNERS = 100_000
/** How often placement is tried again while a cold pod starts. */
const COLD_START_POLL_MS = 200
/** A command's deadline is this much before the gateway stops waiting (at most a tenth of the wait): room for the reply to travel. */
const DEADLINE_MARGIN_MS = 1_000

/**
 * Sends commands to the runners. A session's commands go straight to the
 * runner that owns it (remembered from its replies); a session nobody here
 * knows, or whose owner is gone, goes to the placement group, where a runner
 * with room claims it.
 */
export class RunnerClient implements Runners {
  readonly #bus: Bus
  readonly #subjects: Subjects
  readonly #timeoutMs: number
  readonly #registry: SessionRegistry
  readonly #owners = new Map<string, string>()
  readonly #prefix: string

  readonly #leases: RunnerLeases | undefined

  /** With `leases`, an owner that does not answer is taken for dead only once its lease is gone too. */
  constructor(bus: Bus, subjectPrefix: string, timeoutMs: number, registry: SessionRegistry, leases?: RunnerLeases) {
    this.#leases = leases
    this.#bus = bus
    this.#subjects = subjects(subjectPrefix)
    this.#prefix = subjectPrefix
    this.#timeoutMs = timeoutMs
    this.#registry = registry
  }

  /** Runs a command; failures come back as ServiceError with a stable code. */
  async send<C extends Command>(command: C): Promise<ReplyOf<C['type']>> {
    if (command.type === 'version' || command.type === 'ping') {
      const reply = await this.#request(this.#subjects.control, command)
      if (!reply) throw await this.#noRunner()
      return decodeReply<C['type']>(command.type, reply.data)
    }
    const sessionId = command.session_id
    let demanded = false
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const owner = this.#owners.get(sessionId)
      let reply = await this.#request(owner ? this.#subjects.runner(owner) : this.#subjects.place, command)
      if (!reply && owner === undefined && !demanded) {
        demanded = true
        reply = await this.#coldStart(command)
      }
      if (!reply) {
        if (owner === undefined) throw await this.#noRunner()
        this.#owners.delete(sessionId) // its runner is gone: place the session again
        continue
      }
      const runner = reply.headers?.[RUNNER_HEADER]
      try {
        const body = decodeReply<C['type']>(command.type, reply.data)
        if (command.type === 'close') this.#owners.delete(sessionId)
        else if (runner) this.#remember(sessionId, runner)
        return body
      } catch (err) {
        const code = (err as ServiceError).code
        if (code === 'NOT_OWNER') {
          if (runner && runner !== owner) this.#remember(sessionId, runner)
          else this.#owners.delete(sessionId)
          continue
        }
        // A runner that filled up between joining and answering: another may have room.
        if (code === 'OVERLOADED' && owner === undefined && hop < MAX_HOPS - 1) continue
        throw err
      }
    }
    throw new ServiceError('OVERLOADED', `could not find a runner for session ${sessionId}; retry later`)
  }

  /**
   * For sessions with a turn in flight: each owner is checked once (not each session), and the
   * sessions of an owner that is gone are taken over by a live runner, which ends their lost turns.
   */
  async recoverLost(sessionIds: readonly string[]): Promise<void> {
    const byOwner = new Map<string, string[]>()
    for (const sessionId of sessionIds) {
      // The registry only for sessions this gateway has sent nothing to.
      const owner = this.#owners.get(sessionId) ?? (await this.#registry.get(sessionId))?.value.owner
      if (owner === undefined) continue
      const list = byOwner.get(owner)
      if (list) list.push(sessionId)
      else byOwner.set(owner, [sessionId])
    }
    await Promise.all(
      [...byOwner].map(async ([owner, sessions]) => {
        if (await isRunnerAlive(this.#bus, this.#prefix, this.#leases, owner)) return
        // Straight to a runner that answers: placement could pick the dead owner itself, which a
        // frozen process still is in NATS's eyes, and the recovery would wait out the request timeout.
        const heir = await this.#answeringRunner(owner)
        for (const sessionId of sessions) {
          if (heir) this.#remember(sessionId, heir)
          else this.#owners.delete(sessionId)
          await this.send({ type: 'recover', session_id: sessionId })
        }
      }),
    )
  }

  /** A runner other than `except` that holds a lease, has room and answers a ping; none without leases (dev mode). */
  async #answeringRunner(except: string): Promise<string | undefined> {
    if (!this.#leases) return undefined
    const candidates = (await this.#leases.list()).filter((lease) => lease.runner_id !== except && lease.sessions < lease.max_sessions)
    // Spread the sessions of a lost runner over the others.
    candidates.sort(() => Math.random() - 0.5)
    for (const { runner_id } of candidates) {
      try {
        await this.#bus.request(this.#subjects.runner(runner_id), JSON.stringify({ type: 'ping' }), { timeoutMs: PING_TIMEOUT_MS })
        return runner_id
      } catch {
        // gone or stalled too: try the next
      }
    }
    return undefined
  }

  /**
   * No runner had room: in a cluster, the controller makes a pod for the
   * session, and the command is placed as soon as its runner joins. Without a
   * controller the answer comes at once and nothing waits.
   */
  async #coldStart(command: Command & { session_id: string }): Promise<BusMessage | undefined> {
    const answer = await requestColdPod(this.#bus, this.#prefix, command.session_id, this.#timeoutMs)
    if (!answer.ok) return undefined
    // Placed by the controller (per-session credentials): the pod serves the session on its own subject.
    const subject = answer.assigned ? this.#subjects.runner(answer.pod) : this.#subjects.place
    const deadline = Date.now() + this.#timeoutMs
    for (let first = answer.assigned === true; Date.now() < deadline; first = false) {
      if (!first) await sleep(COLD_START_POLL_MS)
      const reply = await this.#request(subject, command)
      if (reply) return reply
    }
    return undefined
  }

  #remember(sessionId: string, runner: string): void {
    this.#owners.delete(sessionId)
    this.#owners.set(sessionId, runner)
    if (this.#owners.size > MAX_REMEMBERED_OWNERS) this.#owners.delete(this.#owners.keys().next().value!)
  }

  /** The reply, or undefined when nobody listens on the subject. */
  async #request(subject: string, command: Command): Promise<BusMessage | undefined> {
    // A session command carries when this wait ends, less the time a late reply needs to get back:
    // a runner that gets it after that (frozen, swamped) drops it, so RUNNER_TIMEOUT means "not run".
    const sent =
      'session_id' in command
        ? { ...command, deadline: Math.floor(Date.now() + this.#timeoutMs - Math.min(DEADLINE_MARGIN_MS, this.#timeoutMs / 10)) }
        : command
    try {
      return await this.#bus.request(subject, JSON.stringify(sent), { timeoutMs: this.#timeoutMs })
    } catch (err) {
      if (err instanceof BusNoRespondersError) return undefined
      if (err instanceof BusTimeoutError) {
        throw new ServiceError('RUNNER_TIMEOUT', `the runner did not answer ${command.type} within ${this.#timeoutMs} ms`, { cause: err })
      }
      throw new ServiceError('RUNNER_UNAVAILABLE', `the bus failed: ${(err as Error).message}`, { cause: err })
    }
  }

  /** Nobody took a placement: either no runner runs at all, or every one is full. */
  async #noRunner(): Promise<ServiceError> {
    try {
      await this.#bus.request(this.#subjects.control, JSON.stringify({ type: 'ping' }), { timeoutMs: PING_TIMEOUT_MS })
      return new ServiceError('OVERLOADED', 'every runner runs as many sessions as it may (runner.max_sessions); retry later')
    } catch {
      return new ServiceError('RUNNER_UNAVAILABLE', 'no runner is available to take the command; retry later')
    }
  }
}
