/**
 * Least-privilege NATS credentials against a real nats-server in operator mode:
 * a session runner's credential (minted by the controller's code) reaches its
 * own session's subjects and keys, and nothing of another session's or the gateway's.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { PermissionViolationError, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { NatsBus } from '../../bus/mod.ts'
import { inboxPrefixFor, jetStreamNames, permissionsFor, type PermissionSpec } from '../../contract/permissions.ts'
import { subjects } from '../../contract/subjects.ts'
import { encodeUserJwt, formatCreds } from '../../controller/credentials/jwt.ts'
import { SessionCredentialMinter } from '../../controller/credentials/mint.ts'
import { createUser } from '@nats-io/nkeys'
import { openServiceState } from '../../service/state.ts'
import type { State } from '../../state/mod.ts'
import { sessionKey } from '../../state/keys.ts'
import { openBucket } from '../../state/bucket.ts'
import { ConfigSchema } from '../../service/config/mod.ts'
import { natsOperator, type NatsOperator } from '../fixtures/nats-jwt.ts'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'

const quiet = { warn: () => {} }
const log = pino({ level: 'silent' })
const PREFIX = 'perm.test'
const SESSION_A = 'session-a'
/** An id that is not a safe token: its subject token and key are encoded. */
const SESSION_B = 'session b.*'
const s = subjects(PREFIX)
const js = jetStreamNames(PREFIX)
/** As the state layer opens its buckets: the runner's own code path (direct gets by key). */
const BUCKET = { storage: 'memory', replicas: 1 } as const

/** Whether NATS refused the operation for the credential's permissions (a request wraps the refusal). */
function denied(err: unknown): boolean {
  for (let cause: unknown = err; cause instanceof Error; cause = cause.cause) if (cause instanceof PermissionViolationError) return true
  return false
}
const refusal = async (work: Promise<unknown>) =>
  work.then(
    () => 'allowed',
    (err: unknown) => (denied(err) ? 'denied' : err),
  )

describe('session credentials on a real nats-server (operator mode)', () => {
  let dir: string
  let operator: NatsOperator
  let server: NatsFixture
  let gateway: NatsBus
  let state: State
  let podA: NatsBus

  /** A `.creds` file for a static role, signed with the account's signing key as the chart's would be. */
  async function roleCreds(spec: PermissionSpec): Promise<string> {
    const user = createUser()
    const jwt = encodeUserJwt(operator.signingKey, {
      subject: user.getPublicKey(),
      name: spec.role,
      permissions: permissionsFor(spec),
      issuerAccount: operator.account,
      issuedAt: Math.floor(Date.now() / 1000),
    })
    const file = path.join(dir, `${spec.role}.creds`)
    await writeFile(file, formatCreds(jwt, user.getSeed()), { mode: 0o600 })
    return file
  }

  async function sessionBus(sessionId: string, runnerId: string): Promise<NatsBus> {
    const minter = new SessionCredentialMinter({ signer: operator.signingKey, account: operator.account, prefix: PREFIX, ttlMs: 600_000 })
    const minted = minter.mint(sessionId, runnerId)
    const file = path.join(dir, `${runnerId}.creds`)
    await writeFile(file, minted.creds, { mode: 0o600 })
    return NatsBus.connect(server.url, { name: runnerId, logger: quiet, auth: { credsFile: file }, inboxPrefix: minted.inboxPrefix })
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-session-creds-'))
    operator = await natsOperator(dir)
    server = await startPrivateNats(['-c', operator.serverConfig])
    const gatewaySpec = { role: 'gateway', prefix: PREFIX } as const
    gateway = await NatsBus.connect(server.url, {
      name: 'gateway',
      logger: quiet,
      auth: { credsFile: await roleCreds(gatewaySpec) },
      inboxPrefix: inboxPrefixFor(gatewaySpec),
    })
    // The gateway's role opens the deployment's streams and buckets, as a gateway process does.
    const config = ConfigSchema.parse({ nats: { prefix: PREFIX }, state: { storage: 'memory' } })
    state = await openServiceState(gateway, config, log)
    podA = await sessionBus(SESSION_A, 'pod-a')
  })

  afterAll(async () => {
    await podA?.close()
    await state?.close()
    await gateway?.close()
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  /** Subscribes on the raw connection; resolves with the server's refusal, or undefined if it took the subscription. */
  async function trySubscribe(nc: NatsConnection, subject: string, received: Msg[]): Promise<Error | undefined> {
    let refused: Error | undefined
    const sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) refused = err
        else received.push(msg)
      },
    })
    // A round trip: the server answers the SUB (with -ERR when refused) before the PONG.
    await nc.flush()
    await nc.flush()
    if (!refused) sub.unsubscribe()
    return refused
  }

  it('session runner - reads its own commands and answers them (response permission, no inbox rights)', async () => {
    podA.subscribe(s.runner('pod-a'), (msg) => msg.respond(`pong ${msg.data}`))
    await podA.flush()
    expect((await gateway.request(s.runner('pod-a'), 'ping', { timeoutMs: 5_000 })).data).toBe('pong ping')
  })

  it('session runner - stores its own session events through JetStream and continues from the stored ones', async () => {
    const ack = await jetstream(podA.connection).publish(
      s.events(SESSION_A),
      JSON.stringify({ event: 'answer', session_id: SESSION_A, seq: 1, ts: 1, data: 'hi' }),
    )
    expect(ack.stream).toBe(js.events)
    expect((await state.events.read(SESSION_A, 0)).map((e) => e.seq)).toEqual([1])
  })

  it('session runner - writes and reads its own registry record and its own lease', async () => {
    const sessions = await openBucket(podA.connection, PREFIX, 'sessions', BUCKET)
    const revision = await sessions.create(sessionKey(SESSION_A), JSON.stringify({ owner: 'pod-a' }))
    expect((await sessions.get(sessionKey(SESSION_A)))?.revision).toBe(revision)
    const leases = await openBucket(podA.connection, PREFIX, 'runners', BUCKET)
    await leases.put('pod-a', '{}')
    expect((await leases.get('pod-a'))?.string()).toBe('{}')
  })

  it.each([
    ['another session’s events', () => s.events(SESSION_B)],
    ['every session’s events', () => s.allEvents],
    ['another pod’s commands', () => s.runner('pod-b')],
    ['every runner’s commands', () => s.runner('*')],
    ['the placement queue (other sessions’ first commands)', () => s.place],
    ['the controller’s demand', () => s.controllerDemand],
    ['the gateway’s inbox (replies to the gateway)', () => `${inboxPrefixFor({ role: 'gateway', prefix: PREFIX })}.>`],
    ['every inbox', () => '_INBOX.>'],
    ['another session’s registry key', () => js.key('sessions', sessionKey(SESSION_B))],
    ['the whole registry', () => `$KV.${js.bucket('sessions')}.>`],
    ['everything', () => '>'],
  ])('session runner - cannot subscribe to %s', async (_name, subject) => {
    const received: Msg[] = []
    const refused = await trySubscribe(podA.connection, subject(), received)
    expect(refused).toBeInstanceOf(PermissionViolationError)
  })

  it('session runner - receives nothing of another session even when it is published (one publisher keeps order)', async () => {
    // Subscriptions kept open (the server refuses them; were they taken, the messages would arrive here).
    const received: Msg[] = []
    const subs = [s.runner('pod-b'), s.place].map((subject) => podA.connection.subscribe(subject, { callback: (err, msg) => void (err || received.push(msg)) }))
    const sentinel = new Promise<string>((resolve) => podA.subscribe(s.runner('pod-a'), (msg) => msg.data === 'sentinel' && resolve(msg.subject)))
    await podA.flush()
    gateway.publish(s.runner('pod-b'), 'for b')
    gateway.publish(s.place, 'for anyone')
    gateway.publish(s.runner('pod-a'), 'sentinel')
    expect(await sentinel).toBe(s.runner('pod-a'))
    expect(received.map((msg) => msg.subject)).toEqual([])
    for (const sub of subs) sub.unsubscribe()
  })

  it('session runner - cannot publish another session’s events, commands for other pods, placement or demand', async () => {
    // A user without permissions watches every subject of the deployment.
    const observer = await NatsBus.connect(server.url, { name: 'observer', logger: quiet, auth: { credsFile: await operator.userCreds('observer') } })
    const seen: string[] = []
    observer.subscribe(`${PREFIX}.>`, (msg) => seen.push(msg.subject))
    await observer.flush()
    const errors: Error[] = []
    const off = podA.onStatus((status) => status.type === 'error' && errors.push(status.error))
    for (const subject of [s.events(SESSION_B), s.runner('pod-b'), s.place, s.control, s.controllerDemand]) podA.publish(subject, '{}')
    // Its own subject last: the gateway sees it, and (one publisher, in order) none of the refused ones before it.
    podA.publish(s.events(SESSION_A), '{"sentinel":true}')
    await podA.flush()
    await expect.poll(() => seen.includes(s.events(SESSION_A))).toBe(true)
    await observer.close()
    off()
    expect(seen).toEqual([s.events(SESSION_A)])
    expect(errors.filter((err) => err instanceof PermissionViolationError)).toHaveLength(5)
  })

  it('session runner - cannot store another session’s events through JetStream', async () => {
    expect(await refusal(jetstream(podA.connection).publish(s.events(SESSION_B), '{}'))).toBe('denied')
  })

  it('session runner - cannot read or write another session’s registry record, nor another runner’s lease', async () => {
    const sessions = await openBucket(podA.connection, PREFIX, 'sessions', BUCKET)
    const asGateway = await openBucket(gateway.connection, PREFIX, 'sessions', BUCKET)
    await asGateway.put(sessionKey(SESSION_B), '{"owner":"pod-b"}')
    expect(await refusal(sessions.get(sessionKey(SESSION_B)))).toBe('denied')
    expect(await refusal(sessions.put(sessionKey(SESSION_B), '{"owner":"pod-a"}'))).toBe('denied')
    expect(await refusal(sessions.delete(sessionKey(SESSION_B)))).toBe('denied')
    const leases = await openBucket(podA.connection, PREFIX, 'runners', BUCKET)
    expect(await refusal(leases.put('pod-b', '{}'))).toBe('denied')
    // And the record is as it was.
    expect((await asGateway.get(sessionKey(SESSION_B)))?.string()).toBe('{"owner":"pod-b"}')
  })

  it('session runner - no JetStream call that names a subject in its body: message get, consumers, stream changes', async () => {
    const jsm = await jetstreamManager(podA.connection)
    expect(await refusal(jsm.streams.getMessage(js.events, { last_by_subj: s.events(SESSION_B) }))).toBe('denied')
    expect(await refusal(jsm.consumers.add(js.events, { filter_subject: s.events(SESSION_B) }))).toBe('denied')
    expect(await refusal(jsm.streams.purge(js.events))).toBe('denied')
    expect(await refusal(jsm.streams.update(js.events, { max_msgs_per_subject: 1 }))).toBe('denied')
    expect(await refusal(jsm.streams.delete(js.bucketStream('sessions')))).toBe('denied')
  })

  it('session runner - a credential for another session has its own inbox and reaches only that session', async () => {
    const podB = await sessionBus(SESSION_B, 'pod-b')
    try {
      const received: Msg[] = []
      expect(await trySubscribe(podB.connection, s.events(SESSION_A), received)).toBeInstanceOf(PermissionViolationError)
      expect(
        await trySubscribe(
          podB.connection,
          `${inboxPrefixFor({ role: 'session-runner', prefix: PREFIX, sessionId: SESSION_A, runnerId: 'pod-a' })}.>`,
          received,
        ),
      ).toBeInstanceOf(PermissionViolationError)
      expect(await trySubscribe(podB.connection, s.events(SESSION_B), received)).toBeInstanceOf(PermissionViolationError)
      const ack = await jetstream(podB.connection).publish(
        s.events(SESSION_B),
        JSON.stringify({ event: 'answer', session_id: SESSION_B, seq: 1, ts: 1, data: 'hi' }),
      )
      expect(ack.stream).toBe(js.events)
    } finally {
      await podB.close()
    }
  })
})
