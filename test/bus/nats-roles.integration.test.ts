/**
 * The controller's and the shared runner's NATS users against a real
 * nats-server in operator mode: each can do its own work, and not the others'.
 * (A gateway and a runner process running turns: test/e2e/nats-roles.test.ts.)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createUser } from '@nats-io/nkeys'
import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsBus } from '../../bus/mod.ts'
import { ConfigSchema } from '../../service/config/mod.ts'
import { inboxPrefixFor, permissionsFor, type PermissionSpec } from '../../contract/permissions.ts'
import { subjects } from '../../contract/subjects.ts'
import { emptyStats } from '../../contract/stats.ts'
import { publishSessionError } from '../../controller/bus-session-events.ts'
import { encodeUserJwt, formatCreds } from '../../controller/credentials/jwt.ts'
import { BusDemandSource } from '../../controller/demand.ts'
import { RegistrySessionEvents, registrySessionSource } from '../../controller/registry-source.ts'
import { requestColdPod } from '../../gateway/cold-start.ts'
import { openServiceState } from '../../service/state.ts'
import type { State } from '../../state/mod.ts'
import { natsOperator, type NatsOperator } from '../fixtures/nats-jwt.ts'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'

const quiet = { warn: () => {} }
const log = pino({ level: 'silent' })
const PREFIX = 'roles.test'
const s = subjects(PREFIX)
const config = ConfigSchema.parse({ nats: { prefix: PREFIX }, state: { storage: 'memory' } })

describe('controller and runner NATS users on a real nats-server (operator mode)', () => {
  let dir: string
  let operator: NatsOperator
  let server: NatsFixture
  const buses: NatsBus[] = []
  const states: State[] = []

  async function connect(role: 'gateway' | 'controller' | 'runner'): Promise<NatsBus> {
    const spec: PermissionSpec = { role, prefix: PREFIX }
    const user = createUser()
    const jwt = encodeUserJwt(operator.signingKey, {
      subject: user.getPublicKey(),
      name: role,
      permissions: permissionsFor(spec),
      issuerAccount: operator.account,
      issuedAt: Math.floor(Date.now() / 1000),
    })
    const file = path.join(dir, `${role}-${buses.length}.creds`)
    await writeFile(file, formatCreds(jwt, user.getSeed()), { mode: 0o600 })
    const bus = await NatsBus.connect(server.url, { name: role, logger: quiet, auth: { credsFile: file }, inboxPrefix: inboxPrefixFor(spec) })
    buses.push(bus)
    return bus
  }

  async function open(bus: NatsBus): Promise<State> {
    const state = await openServiceState(bus, config, log)
    states.push(state)
    return state
  }

  /** Whether the server refuses `subject` to this connection's subscriptions. */
  async function subscribeRefused(nc: NatsConnection, subject: string): Promise<boolean> {
    let refused = false
    const sub = nc.subscribe(subject, {
      callback: (err) => {
        refused ||= err instanceof PermissionViolationError
      },
    })
    await nc.flush()
    await nc.flush()
    if (!refused) sub.unsubscribe()
    return refused
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-nats-roles-'))
    operator = await natsOperator(dir)
    server = await startPrivateNats(['-c', operator.serverConfig])
  })

  afterAll(async () => {
    for (const state of states) await state.close()
    for (const bus of buses) await bus.close()
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('controller - opens the state, serves demand, releases a dead owner and ends the session’s turn with an error event', async () => {
    const gateway = await connect('gateway')
    const gatewayState = await open(gateway)
    const controller = await connect('controller')
    const state = await open(controller)
    // Watched as the controller does (an ordered consumer on the bucket, then a listing).
    const sessions = registrySessionSource(state.registry, log)
    let changes = 0
    const stopWatch = sessions.watch(() => changes++)

    const stopServing = new BusDemandSource(controller, PREFIX).serve(async () => ({ ok: true, pod: 'pod-1', created: true }))
    await controller.flush()
    expect(await requestColdPod(gateway, PREFIX, 'c-1', 5_000)).toEqual({ ok: true, pod: 'pod-1', created: true })
    stopServing()

    const now = Date.now()
    await gatewayState.registry.create({
      session_id: 'c-1',
      owner: 'pod-1',
      state: 'busy',
      cli_session_id: 'u',
      turn_id: 't-1',
      created_at: now,
      last_active: now,
      stats: emptyStats(),
    })
    const events: string[] = []
    gateway.subscribe(s.events('c-1'), (msg) => events.push(msg.data))
    await gateway.flush()
    const fail = publishSessionError(controller, state.registry, PREFIX)
    await new RegistrySessionEvents(state.registry, fail).fail('c-1', 'SANDBOX_LOST', 'pod gone')
    await new RegistrySessionEvents(state.registry, fail).release('c-1', 'pod-1')
    await expect.poll(() => events.length).toBe(1)
    expect(JSON.parse(events[0]!)).toMatchObject({ event: 'error', turn_id: 't-1', error: { code: 'SANDBOX_LOST' } })
    expect((await gatewayState.registry.get('c-1'))?.value.owner).toBeUndefined()
    // The turn the error ended is gone from the record too (the next owner must not end it again): idle, no owner.
    await expect
      .poll(async () => (await sessions.list()).find((session) => session.session_id === 'c-1'))
      .toEqual(expect.objectContaining({ session_id: 'c-1', state: 'idle' }))
    expect((await gatewayState.registry.get('c-1'))?.value.turn_id).toBeUndefined()
    expect((await sessions.list()).find((session) => session.session_id === 'c-1')?.owner).toBeUndefined()
    expect(changes).toBeGreaterThan(0)
    stopWatch()
  })

  it.each([
    ['controller', 'runner commands', (): string => s.runner('*')],
    ['controller', 'the placement queue', (): string => s.place],
    ['controller', 'the gateway’s inbox', (): string => `${inboxPrefixFor({ role: 'gateway', prefix: PREFIX })}.>`],
    ['runner', 'the gateway’s inbox', (): string => `${inboxPrefixFor({ role: 'gateway', prefix: PREFIX })}.>`],
    ['runner', 'the controller’s demand', (): string => s.controllerDemand],
    ['runner', 'the opencode bucket', (): string => `$KV.roles_test_opencode.>`],
    ['gateway', 'runner commands (other gateways’ requests)', (): string => s.runner('*')],
    ['gateway', 'the placement queue', (): string => s.place],
    ['gateway', 'the runners’ inbox', (): string => `${inboxPrefixFor({ role: 'runner', prefix: PREFIX })}.>`],
  ] as const)('%s - cannot subscribe to %s', async (role, _name, subject) => {
    const bus = await connect(role)
    expect(await subscribeRefused(bus.connection, subject())).toBe(true)
  })

  it('runner - cannot ask for pods, nor delete or purge the event stream', async () => {
    const runner = await connect('runner')
    const { jetstreamManager } = await import('@nats-io/jetstream')
    const jsm = await jetstreamManager(runner.connection)
    const refused = (work: Promise<unknown>): Promise<boolean> =>
      work.then(
        () => false,
        (err: unknown): boolean => {
          for (let cause: unknown = err; cause instanceof Error; cause = cause.cause) if (cause instanceof PermissionViolationError) return true
          return false
        },
      )
    expect(await refused(runner.request(s.controllerDemand, '{"session_id":"x"}', { timeoutMs: 5_000 }))).toBe(true)
    expect(await refused(jsm.streams.purge('roles_test_events'))).toBe(true)
    expect(await refused(jsm.streams.delete('roles_test_events'))).toBe(true)
  })
})
