/**
 * Per-session credentials on a real nats-server in operator mode, each part
 * with its own user: a gateway process, a sandbox pod's runner process
 * (`runner.placement: controller`, started with only its warm-pod credential)
 * and the controller's assigner (controller/credentials/assigner.ts) answering
 * the gateway's demand as the leading controller does. A session goes
 * gateway → controller → pod; the pod's credentials reach nothing of another
 * session or another pod. The whole controller on a real API server:
 * test/kube-local/session-credentials.test.ts.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { PermissionViolationError } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsBus } from '../../bus/mod.ts'
import { AssignmentAnswer } from '../../contract/assignment.ts'
import { subjects } from '../../contract/subjects.ts'
import { SessionAssigner } from '../../controller/credentials/assigner.ts'
import { SessionCredentialMinter } from '../../controller/credentials/mint.ts'
import { percentile } from '../../bench/relay.ts'
import { natsOperator, roleUser, type NatsOperator } from '../fixtures/nats-jwt.ts'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const quiet = { warn: () => {} }
const prefix = `assign-${process.pid}`
const s = subjects(prefix)
/** Short enough that the test outlives the first credential. */
const TTL_MS = 8_000

describe('per-session credentials: gateway → controller → pod (operator mode)', () => {
  let dir: string
  let operator: NatsOperator
  let nats: NatsFixture
  let serverLog: string
  let controllerBus: NatsBus
  let assigner: SessionAssigner
  let gateway: ServiceProcess
  const pods = new Map<string, ServiceProcess>()
  let client: WsClient | undefined
  const placements: number[] = []
  /** When each session's first credential was minted (it expires TTL_MS later). */
  const placedAt = new Map<string, number>()

  const roleNats = async (role: 'gateway' | 'controller') => ({ url: nats.url, prefix, ...(await roleUser(operator, dir, role, prefix)) })

  /** A pod's warm-pod credential as its Secret holds it. */
  async function warmCreds(pod: string): Promise<{ file: string; inboxPrefix: string }> {
    const warm = assigner.warmPod(pod)
    const file = path.join(dir, `${pod}.creds`)
    await writeFile(file, warm.creds, { mode: 0o600 })
    return { file, inboxPrefix: warm.inboxPrefix }
  }

  const base = () => ({
    server: { port: 0, shutdown_grace: '1s', host: '127.0.0.1' },
    engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, stop_grace: '1s' },
    session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
    state: { storage: 'memory' },
  })

  async function startPod(pod: string): Promise<ServiceProcess> {
    const warm = await warmCreds(pod)
    const started = await startServiceProcess(
      'runner',
      {
        ...base(),
        runner: { id: pod, max_sessions: 1, placement: 'controller', http_port: 0 },
        nats: { url: nats.url, prefix, creds_file: warm.file, inbox_prefix: warm.inboxPrefix },
      },
      dir,
    )
    pods.set(pod, started)
    return started
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-assign-'))
    operator = await natsOperator(dir)
    serverLog = path.join(dir, 'nats.log')
    nats = await startPrivateNats(['-c', operator.serverConfig, '-l', serverLog])
    const controllerNats = await roleNats('controller')
    controllerBus = await NatsBus.connect(nats.url, {
      name: 'controller',
      logger: quiet,
      auth: { credsFile: controllerNats.creds_file },
      inboxPrefix: controllerNats.inbox_prefix,
    })
    assigner = new SessionAssigner({ bus: controllerBus, prefix, signer: operator.signingKey, account: operator.account, ttlMs: TTL_MS })
    // The gateway creates the streams and buckets; a pod's credential may only look them up.
    gateway = await startServiceProcess('gateway', { ...base(), nats: await roleNats('gateway') }, dir)
    // The leading controller's demand answer, placing each session on the next free pod.
    const free = ['pod-a', 'pod-b']
    controllerBus.subscribe(
      s.controllerDemand,
      (msg) => {
        const { session_id } = JSON.parse(msg.data) as { session_id: string }
        const pod = free.shift()
        if (pod === undefined) return msg.respond(JSON.stringify({ ok: false, code: 'POOL_EXHAUSTED', message: 'no pod' }))
        const started = performance.now()
        placedAt.set(session_id, Date.now())
        void assigner.assign(pod, session_id).then((result) => {
          placements.push(performance.now() - started)
          msg.respond(
            JSON.stringify(result.ok ? { ok: true, pod, created: false, assigned: true } : { ok: false, code: 'INTERNAL', message: JSON.stringify(result) }),
          )
        })
      },
      { queue: 'agent-runtime-controller' },
    )
    await controllerBus.flush()
    await Promise.all([startPod('pod-a'), startPod('pod-b')])
  }, 60_000)

  afterAll(async () => {
    await client?.close()
    await gateway?.stop()
    await Promise.all([...pods.values()].map((pod) => pod.stop()))
    await controllerBus?.close()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  }, 60_000)

  const output = () => `--- gateway\n${gateway.output()}\n${[...pods.values()].map((p) => p.output()).join('\n')}`

  it('placement - a session goes gateway → controller → a warm pod, which serves it with its own credential; a second session gets the other pod', async () => {
    client = await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', request_id: 1, session_id: 'sess-1', prompt: 'tool: echo placed' })
    await client.event('completed', 'sess-1', 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${output()}`)
    })
    expect(client.eventsOf('sess-1').find((msg) => msg.event === 'tool_result')?.data).toBe('placed')
    expect(pods.get('pod-a')!.output()).toContain('assigned a session by the controller')
    client.send({ type: 'execute', request_id: 2, session_id: 'sess-2', prompt: 'hello' })
    await client.event('completed', 'sess-2', 30_000)
    expect(pods.get('pod-b')!.output()).toMatch(/"session_id":"sess-2"/)
    expect(placements).toHaveLength(2)
    const sorted = [...placements].sort((a, b) => a - b)
    console.log(
      `[assign] placement (demand → pod serving with its credential): ${sorted.map((ms) => ms.toFixed(1)).join(', ')} ms (p50 ${percentile(sorted, 50).toFixed(1)})`,
    )
  })

  it('placement - a placed pod answers no other session, even when asked on its own subject', async () => {
    const reply = await controllerBus
      .request(s.runner('pod-a'), JSON.stringify({ type: 'stats', session_id: 'sess-2' }), { timeoutMs: 5_000 })
      .catch((err: Error) => err)
    // The controller's user may not send commands; the gateway's may: ask as the gateway would.
    expect(reply).toBeInstanceOf(Error)
    const gatewayUser = await roleNats('gateway')
    const asGateway = await NatsBus.connect(nats.url, {
      name: 'gw-probe',
      logger: quiet,
      auth: { credsFile: gatewayUser.creds_file },
      inboxPrefix: gatewayUser.inbox_prefix,
    })
    try {
      const answer = JSON.parse(
        (await asGateway.request(s.runner('pod-a'), JSON.stringify({ type: 'stats', session_id: 'sess-2' }), { timeoutMs: 5_000 })).data,
      )
      expect(answer).toMatchObject({ ok: false, error: { code: 'SESSION_NOT_FOUND' } })
    } finally {
      await asGateway.close()
    }
  })

  it('placement - a pod serves one session for life: an assignment of another session is refused', async () => {
    const result = await assigner.assign('pod-a', 'sess-other')
    expect(result).toMatchObject({ ok: false, reason: 'refused', message: expect.stringContaining('WRONG_SESSION') })
  })

  it('renewal - a renewed credential replaces the first before it expires; the session keeps working after the first one ran out', async () => {
    // Renewed halfway through the first credential's life, as the controller does (at two thirds): a renewal
    // right after the placement would expire within the same second as the first (JWT times are in seconds).
    await sleep(placedAt.get('sess-1')! + TTL_MS / 2 - Date.now())
    const renewed = await assigner.assign('pod-a', 'sess-1')
    expect(renewed.ok).toBe(true)
    // As the controller renews every placed pod.
    expect((await assigner.assign('pod-b', 'sess-2')).ok).toBe(true)
    await expect.poll(() => pods.get('pod-a')!.output().includes('session credential renewed'), { timeout: 5_000 }).toBe(true)
    // Past the first credential's expiry (the server would have cut the connection), within the renewed one's.
    await sleep(placedAt.get('sess-1')! + TTL_MS + 1_000 - Date.now())
    client!.send({ type: 'execute', request_id: 3, session_id: 'sess-1', prompt: 'tool: echo still here' })
    await client!
      .next((msg) => msg.request_id === 3 && msg.event === 'completed', 30_000)
      .catch((err: Error) => {
        throw new Error(`${err.message}\n${output()}`)
      })
    expect(
      client!
        .eventsOf('sess-1')
        .filter((msg) => msg.event === 'tool_result')
        .map((msg) => msg.data),
    ).toContain('still here')
    // Room for the wait past the first credential's expiry (up to TTL_MS) and the turn's own 30 s.
  }, 60_000)

  describe('isolation', () => {
    /** Subscribes on a raw connection; the server's refusal, or undefined when it took the subscription. */
    async function trySubscribe(bus: NatsBus, subject: string): Promise<Error | undefined> {
      let refused: Error | undefined
      const sub = bus.connection.subscribe(subject, { callback: (err) => void (err && (refused = err)) })
      await bus.connection.flush()
      await bus.connection.flush()
      if (!refused) sub.unsubscribe()
      return refused
    }

    it.each([
      ['its own assignment subject', s.assign('pod-w'), 'allowed'],
      ['another pod’s assignment subject (its session credential)', s.assign('pod-a'), 'denied'],
      ['every assignment subject', s.assign('*'), 'denied'],
      ['a session’s events', s.events('sess-1'), 'denied'],
      ['every session’s events', s.allEvents, 'denied'],
      ['every session’s live deltas', s.allLive, 'denied'],
      ['a pod’s commands', s.runner('pod-a'), 'denied'],
      ['its own command subject (it has no session yet)', s.runner('pod-w'), 'denied'],
      ['the placement queue', s.place, 'denied'],
      ['the controller’s demand', s.controllerDemand, 'denied'],
      ['the registry', `$KV.${prefix.replaceAll('.', '_')}_sessions.>`, 'denied'],
      ['everything', '>', 'denied'],
    ])('a warm pod’s credential - subscribe to %s: %s', async (_name, subject, expected) => {
      const warm = await warmCreds('pod-w')
      const bus = await NatsBus.connect(nats.url, { name: 'pod-w', logger: quiet, auth: { credsFile: warm.file }, inboxPrefix: warm.inboxPrefix })
      try {
        const refused = await trySubscribe(bus, subject)
        expect(refused === undefined ? 'allowed' : refused instanceof PermissionViolationError ? 'denied' : refused).toBe(expected)
      } finally {
        await bus.close()
      }
    })

    it('a warm pod’s credential - publishes nothing, yet answers its assignment', async () => {
      const warm = await warmCreds('pod-w')
      const bus = await NatsBus.connect(nats.url, { name: 'pod-w', logger: quiet, auth: { credsFile: warm.file }, inboxPrefix: warm.inboxPrefix })
      const observer = await NatsBus.connect(nats.url, { name: 'observer', logger: quiet, auth: { credsFile: await operator.userCreds('observer') } })
      try {
        const seen: string[] = []
        observer.subscribe(`${prefix}.>`, (msg) => seen.push(msg.subject))
        await observer.flush()
        const errors: Error[] = []
        const off = bus.onStatus((status) => status.type === 'error' && errors.push(status.error))
        bus.subscribe(s.assign('pod-w'), (msg) => msg.respond(JSON.stringify({ ok: false, code: 'INTERNAL', message: 'probe' })))
        for (const subject of [s.events('sess-1'), s.runner('pod-a'), s.place, s.controllerDemand, s.assign('pod-a')]) bus.publish(subject, '{}')
        await bus.flush()
        const answer = AssignmentAnswer.parse(JSON.parse((await controllerBus.request(s.assign('pod-w'), '{}', { timeoutMs: 5_000 })).data))
        expect(answer).toMatchObject({ ok: false, message: 'probe' })
        await bus.flush()
        off()
        // Only the controller's own request went by; nothing the warm pod published.
        expect(seen).toEqual([s.assign('pod-w')])
        expect(errors.filter((err) => err instanceof PermissionViolationError)).toHaveLength(5)
      } finally {
        await bus.close()
        await observer.close()
      }
    })

    it.each([
      ['another pod’s assignment subject', s.assign('pod-b'), 'denied'],
      ['another session’s events', s.events('sess-2'), 'denied'],
      ['another pod’s commands', s.runner('pod-b'), 'denied'],
      ['the placement queue', s.place, 'denied'],
      ['its own assignment subject (renewals)', s.assign('pod-a'), 'allowed'],
      ['its own commands', s.runner('pod-a'), 'allowed'],
    ])('a placed pod’s session credential - subscribe to %s: %s', async (_name, subject, expected) => {
      const minted = new SessionCredentialMinter({ signer: operator.signingKey, account: operator.account, prefix, ttlMs: 60_000 }).mint('sess-1', 'pod-a')
      const bus = await NatsBus.connect(nats.url, { name: 'pod-a-probe', logger: quiet, auth: { creds: () => minted.creds }, inboxPrefix: minted.inboxPrefix })
      try {
        const refused = await trySubscribe(bus, subject)
        expect(refused === undefined ? 'allowed' : refused instanceof PermissionViolationError ? 'denied' : refused).toBe(expected)
      } finally {
        await bus.close()
      }
    })

    it('nothing the gateway, the controller or the pods did was refused by the server', async () => {
      // The probes above provoke refusals on purpose under their own names; the service's users caused none.
      const violations = (await readFile(serverLog, 'utf8')).split('\n').filter((line) => /Permissions Violation/i.test(line))
      expect(violations.filter((line) => !/pod-w|pod-a-probe|observer|gw-probe|controller.*runner/.test(line))).toEqual([])
      expect(output()).not.toMatch(/Permissions Violation/i)
    })
  })
})
