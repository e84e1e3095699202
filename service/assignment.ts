import { createServer, type Server } from 'node:http'
import type { Logger } from 'pino'
import { NatsBus, type BusMessage, type Subscription } from '../bus/mod.ts'
import { Assignment, type AssignmentAnswer } from '../contract/assignment.ts'
import { subjects } from '../contract/subjects.ts'
import type { Config } from './config/schema.ts'

/** A sandbox pod given its session by the controller (`runner.placement: controller`). */
export interface Assigned {
  /** Connected with the session's own credential (renewed in place, see below). */
  bus: NatsBus
  sessionId: string
  /** Tells the controller the pod serves the session now, and drops the warm pod's connection. */
  accept(runnerId: string): void
  /** Stops listening for renewals and closes the warm connection if still open (the session bus is the caller's). */
  close(): Promise<void>
}

/**
 * A sandbox pod with per-session credentials waits here for its session. Its
 * own credential (`warm-pod`, from its pod's Secret: `nats.creds_file`) can
 * only receive `<prefix>.assign.<pod>`, nothing of any session. The
 * controller sends the assignment there with a `session-runner` credential
 * for that one session; the pod connects with it (kept in memory, never
 * written to a file the agent could read) and the runner serves that session
 * on it. Renewals come on the same subject over the session's connection:
 * the new credential is used from an immediate reconnect.
 *
 * While waiting it answers `/health/live` and `/health/ready` on
 * `runner.http_port` (ready = the warm connection is up), so the pod counts as
 * warm only when it can be assigned.
 */
export async function awaitAssignment(config: Config, log: Logger): Promise<Assigned> {
  const podName = config.runner.id
  if (podName === undefined) throw new Error('runner.placement: controller needs the pod name as runner.id (RUNNER_ID)')
  const credsFile = config.nats.creds_file
  if (credsFile === undefined) throw new Error('runner.placement: controller needs the warm pod credential (nats.creds_file, NATS_CREDS)')
  const logger = log.child({ component: 'assignment', pod: podName })
  const subject = subjects(config.nats.prefix).assign(podName)
  const warm = await NatsBus.connect(config.nats.url, {
    name: `agent-runtime-warm-${podName}`,
    logger,
    auth: { credsFile },
    inboxPrefix: config.nats.inbox_prefix,
  })
  /** The session credential in force: the session connection asks for it at every (re)connect. */
  const credential = { creds: '' }
  let probes: Server | undefined
  try {
    probes = await serveProbes(config, () => warm.isConnected())
    const address = probes && addressOf(probes)
    const { assignment, message, bus } = await new Promise<{ assignment: Assignment; message: BusMessage; bus: NatsBus }>((resolve) => {
      let taken = false
      const sub = warm.subscribe(subject, (msg) => {
        if (taken) return void msg.respond(answer({ ok: false, code: 'WRONG_SESSION', message: `pod ${podName} is being assigned already` }))
        const parsed = Assignment.safeParse(parseJson(msg.data))
        if (!parsed.success) return void msg.respond(answer({ ok: false, code: 'INTERNAL', message: `bad assignment: ${parsed.error.message}` }))
        taken = true
        credential.creds = parsed.data.creds
        NatsBus.connect(config.nats.url, {
          name: `agent-runtime-runner-${podName}`,
          logger,
          auth: { creds: () => credential.creds },
          inboxPrefix: parsed.data.inbox_prefix,
        }).then(
          (bus) => {
            sub.unsubscribe()
            resolve({ assignment: parsed.data, message: msg, bus })
          },
          (err: unknown) => {
            taken = false
            logger.warn({ err, session_id: parsed.data.session_id }, 'cannot connect with the session credential; waiting for another assignment')
            msg.respond(answer({ ok: false, code: 'INTERNAL', message: `cannot connect with the session credential: ${(err as Error).message}` }))
          },
        )
      })
      void warm.flush().then(() => log.info({ mode: 'runner', address, waiting: 'assignment', subject }, 'agent runtime started'))
    })
    // The runner's own probe server takes the port from here.
    await closeServer(probes)
    probes = undefined
    logger.info({ session_id: assignment.session_id, expires_at: assignment.expires_at }, 'assigned a session by the controller')
    return new AssignedPod(warm, bus, assignment.session_id, credential, message, subject, logger)
  } catch (err) {
    await closeServer(probes)
    await warm.close()
    throw err
  }
}

class AssignedPod implements Assigned {
  readonly bus: NatsBus
  readonly sessionId: string
  readonly #warm: NatsBus
  readonly #first: BusMessage
  readonly #subject: string
  readonly #log: Logger
  readonly #credential: { creds: string }
  #renewals: Subscription | undefined
  #runnerId = ''

  constructor(warm: NatsBus, bus: NatsBus, sessionId: string, credential: { creds: string }, first: BusMessage, subject: string, log: Logger) {
    this.#warm = warm
    this.bus = bus
    this.sessionId = sessionId
    this.#credential = credential
    this.#first = first
    this.#subject = subject
    this.#log = log
  }

  accept(runnerId: string): void {
    this.#runnerId = runnerId
    this.#renewals = this.bus.subscribe(this.#subject, (msg) => void this.#renew(msg))
    // Answered on the warm connection (its response permission); then that credential is dropped.
    this.#first.respond(answer({ ok: true, runner: runnerId }))
    void this.bus.flush().then(() => this.#warm.close())
  }

  async close(): Promise<void> {
    this.#renewals?.unsubscribe()
    await this.#warm.close()
  }

  /** A fresh credential for the same session: used from an immediate reconnect (the old one expires soon). */
  async #renew(msg: BusMessage): Promise<void> {
    const parsed = Assignment.safeParse(parseJson(msg.data))
    if (!parsed.success) return void msg.respond(answer({ ok: false, code: 'INTERNAL', message: `bad assignment: ${parsed.error.message}` }))
    if (parsed.data.session_id !== this.sessionId) {
      return void msg.respond(answer({ ok: false, code: 'WRONG_SESSION', message: `this pod serves session ${this.sessionId} for life` }))
    }
    this.#credential.creds = parsed.data.creds
    // Answered before the reconnect: the response permission belongs to this connection.
    msg.respond(answer({ ok: true, runner: this.#runnerId }))
    await this.bus.flush()
    try {
      await this.bus.reconnect()
      this.#log.info({ session_id: this.sessionId, expires_at: parsed.data.expires_at }, 'session credential renewed')
    } catch (err) {
      this.#log.warn({ err }, 'reconnecting with the renewed session credential failed; the client keeps trying')
    }
  }
}

const answer = (body: AssignmentAnswer) => JSON.stringify(body)

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** /health/live and /health/ready while the pod waits; none without runner.http_port. */
async function serveProbes(config: Config, ready: () => boolean): Promise<Server | undefined> {
  const port = config.runner.http_port
  if (port === undefined) return undefined
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0]
    const ok = path === '/health/live' || (path === '/health/ready' && ready())
    const known = path === '/health/live' || path === '/health/ready'
    response.writeHead(known ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' })
    response.end(
      JSON.stringify(
        known
          ? { status: ok ? (path === '/health/live' ? 'alive' : 'ready') : 'not_ready', waiting: 'assignment' }
          : { error: { code: 'ROUTE_NOT_FOUND', message: 'not found' } },
      ),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, config.server.host, () => resolve())
  })
  return server
}

function addressOf(server: Server): string {
  const address = server.address()
  if (address === null || typeof address === 'string') return String(address)
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
}

function closeServer(server: Server | undefined): Promise<void> {
  if (server === undefined) return Promise.resolve()
  return new Promise((resolve) => server.close(() => resolve()))
}
