/**
 * Per-session NATS credentials on a real API server: the chart installed with
 * `sessionCredentials.enabled` (the account's signing key in a Secret) into a
 * namespace enforcing `restricted`, nats-server in operator mode, the
 * controller run here with the chart's ServiceAccount token (so the chart's
 * Role is all it may do) and the signing key read from the Secret its
 * Deployment mounts. Each sandbox pod the controller makes gets its own
 * credential in a Secret the pod owns; `PodRunners` starts the pod's runner
 * with that Secret mounted as a kubelet would, so a runner holds nothing but
 * its pod's credential until the controller hands it a session. A WebSocket
 * session goes gateway → controller → pod → fake CLI → client. The gateway
 * and the controller connect as their roles' users with `.creds` files made
 * here: the chart gives them only NATS_USER/NATS_PASSWORD, which a server in
 * operator mode does not take. The same flow
 * without Kubernetes, and what each credential may reach:
 * test/service/assignment.integration.test.ts.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { KubeConfig, type V1Secret } from '@kubernetes/client-node'
import { describe, expect, test } from 'vitest'
import { percentile } from '../../bench/relay.ts'
import { subjects } from '../../contract/subjects.ts'
import { decodeJwtClaims } from '../../controller/credentials/jwt.ts'
import { POD_CREDS_KEY, podCredentialsSecret, RUNNER_CONTAINER } from '../../controller/pod-spec.ts'
import { natsOperator, roleUser, type NatsOperator } from '../fixtures/nats-jwt.ts'
import { startPrivateNats } from '../fixtures/nats-server.ts'
import { clients, until } from './kube-local.ts'
import { sessionClusterForFile } from './session-cluster.ts'

const NS = 'ar-session-creds'
const prefix = `k8sc${process.pid}`
const SIGNING_KEY_SECRET = 'nats-account-signing-key'
/** Sessions whose placement is measured (each on a fresh warm pod). */
const PLACEMENTS = 10

let operator: NatsOperator
let natsLog: string

const k8s = sessionClusterForFile({
  namespace: NS,
  release: 'arc',
  prefix,
  async startNats(dir) {
    operator = await natsOperator(dir)
    natsLog = path.join(dir, 'nats.log')
    return startPrivateNats(['-c', operator.serverConfig, '-l', natsLog])
  },
  async beforeInstall() {
    await k8s.api.core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: SIGNING_KEY_SECRET }, stringData: { 'signing-key': new TextDecoder().decode(operator.signingKey.getSeed()) } },
    })
  },
  helmArgs: () => [
    '--set',
    'sessionCredentials.enabled=true',
    '--set',
    `sessionCredentials.signingKey.existingSecret=${SIGNING_KEY_SECRET}`,
    '--set',
    `sessionCredentials.account=${operator.account}`,
  ],
  // The test's own user (no limits) opens the state; the gateway and the controller have their roles' users.
  busAuth: async () => ({ credsFile: await operator.userCreds('k8s-creds-test') }),
  async controllerConfig(base) {
    const credentials = base.controller.session_credentials
    return {
      ...base,
      nats: { ...base.nats, ...(await roleUser(operator, k8s.dir, 'controller', prefix)) },
      controller: { ...base.controller, session_credentials: { ...credentials, signing_key_file: await mountSigningKey(credentials.signing_key_file) } },
    }
  },
  gatewayConfig: async (base) => ({ ...base, nats: { ...base.nats, ...(await roleUser(operator, k8s.dir, 'gateway', prefix)) } }),
})
const POOL = k8s.pool
const { warmWithRunner, output, ownerOf, turnEvent } = k8s

/**
 * The signing key file the controller's config names, as the chart's controller Deployment mounts
 * it: the Secret volume whose mount holds that path, its key written here; returns the local path.
 */
async function mountSigningKey(file: string): Promise<string> {
  const template = (await k8s.api.apps.readNamespacedDeployment({ name: `${k8s.fullname}-controller`, namespace: NS })).spec!.template.spec!
  const mount = template.containers.flatMap((c) => c.volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath}/`))
  const secretName = template.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName
  if (mount === undefined || secretName === undefined) throw new Error(`the controller Deployment mounts no Secret at ${file}`)
  const key = file.slice(mount.mountPath.length + 1)
  const value = (await k8s.api.core.readNamespacedSecret({ name: secretName, namespace: NS })).data?.[key]
  if (value === undefined) throw new Error(`Secret ${secretName} has no key ${key}`)
  const local = path.join(k8s.dir, 'controller', mount.name, key)
  await mkdir(path.dirname(local), { recursive: true })
  await writeFile(local, Buffer.from(value, 'base64'), { mode: 0o400 })
  return local
}

/** Clients with the token of the chart's controller ServiceAccount: what the chart's Role lets the controller do. */
function asController() {
  const config = new KubeConfig()
  config.loadFromFile(k8s.controllerKubeconfig)
  return clients(config)
}

const notFound = (err: unknown) => (err as { code?: number }).code === 404
async function secretOf(pod: string): Promise<V1Secret | undefined> {
  return k8s.api.core.readNamespacedSecret({ name: podCredentialsSecret(pod), namespace: NS }).catch((err: unknown) => {
    if (notFound(err)) return undefined
    throw err
  })
}
/** The controller's log lines that say `msg`, parsed. */
function controllerSaid(msg: string): Record<string, any>[] {
  return k8s.controller
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line))
}
const PLACED = 'session placed on its pod with its own credential'
/** The user JWT of a `.creds` text. */
const credsJwt = (creds: string) => decodeJwtClaims(creds.split('\n')[1]!)

/** Closes a session as a client does (DELETE /v1/sessions/{id}): the runner ends it and deletes its record. */
async function closeSession(sessionId: string): Promise<void> {
  const response = await fetch(`${k8s.gateway.address}/v1/sessions/${sessionId}`, { method: 'DELETE' })
  if (!response.ok) throw new Error(`closing ${sessionId}: ${response.status} ${await response.text()}`)
}

/** A turn of a new session: the session's owner once it completed. */
async function firstTurn(sessionId: string, prompt: string): Promise<string> {
  k8s.client.send({ type: 'execute', request_id: 1, session_id: sessionId, prompt })
  const end = await turnEvent(sessionId, 1, (event) => event === 'completed' || event === 'error')
  if (end.event !== 'completed') throw new Error(`${sessionId}: ${JSON.stringify(end)}\n${output()}`)
  const owner = await ownerOf(sessionId)
  if (owner === undefined) throw new Error(`${sessionId} has no owner\n${output()}`)
  return owner
}

describe('k8s - per-session NATS credentials: sessions placed by the controller on pods holding their own credential', () => {
  const owners: string[] = []

  test('a WebSocket turn runs on a controller-placed pod whose only credential is its own, from a Secret the pod owns', async () => {
    await until(
      async () => (await warmWithRunner()).length === 2,
      () => `two warm pods with runners\n${output()}`,
      90_000,
    )
    const owner = await firstTurn('creds-1', 'tool: echo with its own credential')
    owners.push(owner)
    expect(k8s.client.eventsOf('creds-1').find((msg) => msg.event === 'tool_result')?.data).toBe('with its own credential')
    expect(owner).toMatch(new RegExp(`^${POOL}-`))
    expect(k8s.pods.get(owner)?.process.output()).toContain('assigned a session by the controller')
    expect(controllerSaid(PLACED)).toEqual([expect.objectContaining({ pod: owner, session_id: 'creds-1' })])

    // The pod names no Secret but its own, and no shared NATS user.
    const pod = await k8s.api.core.readNamespacedPod({ name: owner, namespace: NS })
    const container = pod.spec!.containers.find((c) => c.name === RUNNER_CONTAINER)!
    const secretsNamed = [
      ...(pod.spec!.volumes ?? []).flatMap((v) => (v.secret ? [v.secret.secretName] : [])),
      ...(container.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])),
    ]
    expect(secretsNamed).toEqual([podCredentialsSecret(owner)])
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]))
    expect(env).toMatchObject({ NATS_CREDS: expect.stringMatching(new RegExp(`/${POD_CREDS_KEY}$`)), RUNNER_PLACEMENT: 'controller' })
    expect(Object.keys(env).filter((name) => /^NATS_(USER|PASSWORD|TOKEN)$/.test(name))).toEqual([])
    expect(pod.spec!.automountServiceAccountToken).toBe(false)

    // Its Secret: owned by the pod, holding a credential that reaches its own assignment subject only.
    const secret = (await secretOf(owner))!
    expect(secret.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'v1', kind: 'Pod', name: owner, uid: pod.metadata!.uid, controller: true }),
    ])
    const creds = Buffer.from(secret.data![POD_CREDS_KEY]!, 'base64').toString('utf8')
    const claims = credsJwt(creds)
    expect(claims).toMatchObject({
      name: `warm-pod ${owner}`,
      iss: operator.signingKey.getPublicKey(),
      nats: { issuer_account: operator.account, pub: { deny: ['>'] }, sub: { allow: [subjects(prefix).assign(owner)] } },
    })
    expect(claims.nats.pub.allow).toBeUndefined()
    // The file its runner read is that Secret's key, as the kubelet mounts it.
    expect(await readFile(path.join(k8s.dir, owner, 'nats', POD_CREDS_KEY), 'utf8')).toBe(creds)

    // The controller made that Secret with the chart's Role, which lets it create Secrets but not read them.
    const read = await asController()
      .core.readNamespacedSecret({ name: podCredentialsSecret(owner), namespace: NS })
      .catch((err: unknown) => err)
    expect((read as { code?: number }).code).toBe(403)
  })

  test('a second session gets another pod, with a credential of its own', async () => {
    const owner = await firstTurn('creds-2', 'tool: echo second')
    owners.push(owner)
    expect(owners[1]).not.toBe(owners[0])
    expect(k8s.pods.get(owner)?.process.output()).toContain('"session_id":"creds-2"')
    expect(k8s.pods.get(owners[0]!)?.process.output()).not.toContain('"session_id":"creds-2"')
    const [first, second] = await Promise.all(
      owners.map(async (pod) => credsJwt(Buffer.from((await secretOf(pod))!.data![POD_CREDS_KEY]!, 'base64').toString('utf8'))),
    )
    expect(second!.sub).not.toBe(first!.sub)
    expect(second!.nats.sub.allow).toEqual([subjects(prefix).assign(owners[1]!)])
  })

  test('closing a session (DELETE /v1/sessions/{id}) deletes its pod, and the garbage collector the pod’s Secret', async () => {
    const [pod] = owners
    const closedAt = performance.now()
    await closeSession('creds-1')
    expect(await k8s.state.registry.get('creds-1')).toBeUndefined()
    let last: unknown
    const gone = async () => {
      const read = await k8s.api.core.readNamespacedPod({ name: pod!, namespace: NS }).catch(() => undefined)
      last = read?.metadata
      return read === undefined
    }
    await until(gone, () => `pod ${pod} deleted; last seen: ${JSON.stringify(last)}\n${output()}`, 150_000)
    const deletedAfter = performance.now() - closedAt
    await until(async () => (await secretOf(pod!)) === undefined, `the Secret of ${pod} garbage-collected`, 60_000)
    console.log(`[k8s] closed → pod deleted ${(deletedAfter / 1000).toFixed(1)} s, → its Secret gone ${((performance.now() - closedAt) / 1000).toFixed(1)} s`)
    await closeSession('creds-2')
  }, 240_000)

  test(`placement with per-session credentials: execute → first event over ${PLACEMENTS} sessions, each on a fresh warm pod`, async () => {
    const firstEvent: number[] = []
    const placedOn = new Set<string>()
    for (let i = 0; i < PLACEMENTS; i++) {
      // A full pool, so no runner starts on these 2 cores while a placement is measured.
      await until(
        async () => (await warmWithRunner()).length === 2,
        () => `a full warm pool with runners\n${output()}`,
        90_000,
      )
      const sessionId = `creds-p${i}`
      const sent = performance.now()
      k8s.client.send({ type: 'execute', request_id: 1, session_id: sessionId, prompt: 'hi' })
      await turnEvent(sessionId, 1, () => true)
      firstEvent.push(performance.now() - sent)
      await turnEvent(sessionId, 1, (event) => event === 'completed')
      placedOn.add((await ownerOf(sessionId))!)
      await closeSession(sessionId)
    }
    // The controller's own measure: assignment sent → the pod serves the session with its credential.
    const assigned = controllerSaid(PLACED)
      .filter((line) => String(line.session_id).startsWith('creds-p'))
      .map((line) => line.ms as number)
    const line = (list: number[]) => {
      const sorted = [...list].sort((a, b) => a - b)
      return `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms (n=${sorted.length})`
    }
    console.log(
      `[k8s] per-session credentials on the real API server: execute → first event ${line(firstEvent)}; of which the controller's assignment (credential minted → pod serving) ${line(assigned)}`,
    )
    expect(placedOn.size).toBe(PLACEMENTS)
    expect(assigned).toHaveLength(PLACEMENTS)
    expect(k8s.pods.errors).toEqual([])
  }, 900_000)

  test('the server refused nothing the gateway, the controller or the pods did', async () => {
    const violations = (await readFile(natsLog, 'utf8')).split('\n').filter((line) => /Permissions Violation|Authorization Violation/i.test(line))
    expect(violations).toEqual([])
    expect(output()).not.toMatch(/Permissions Violation|Authorization Violation/i)
  })
})
