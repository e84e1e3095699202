/**
 * Each part with its own least-privilege NATS user (contract/permissions.ts) on a
 * nats-server in operator mode: a gateway and a runner process run whole turns,
 * and the server logs no permission violation (the runner would drop events NATS refuses).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createUser } from '@nats-io/nkeys'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inboxPrefixFor, permissionsFor, type PermissionSpec } from '../../contract/permissions.ts'
import { encodeUserJwt, formatCreds } from '../../controller/credentials/jwt.ts'
import { natsOperator, type NatsOperator } from '../fixtures/nats-jwt.ts'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

describe('gateway and runner with their own NATS users (operator mode)', () => {
  let dir: string
  let operator: NatsOperator
  let nats: NatsFixture
  let gateway: ServiceProcess
  let runner: ServiceProcess
  let client: WsClient | undefined
  let serverLog: string
  const prefix = `roles-${process.pid}`

  async function roleNats(role: 'gateway' | 'runner') {
    const spec: PermissionSpec = { role, prefix }
    const user = createUser()
    const jwt = encodeUserJwt(operator.signingKey, {
      subject: user.getPublicKey(),
      name: role,
      permissions: permissionsFor(spec),
      issuerAccount: operator.account,
      issuedAt: Math.floor(Date.now() / 1000),
    })
    const file = path.join(dir, `${role}.creds`)
    await writeFile(file, formatCreds(jwt, user.getSeed()), { mode: 0o600 })
    return { url: nats.url, prefix, creds_file: file, inbox_prefix: inboxPrefixFor(spec) }
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-nats-roles-'))
    operator = await natsOperator(dir)
    serverLog = path.join(dir, 'nats.log')
    nats = await startPrivateNats(['-c', operator.serverConfig, '-l', serverLog])
    const config = {
      server: { port: 0, shutdown_grace: '1s' },
      engine: { command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') }, stop_grace: '1s' },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      state: { storage: 'memory' },
    }
    runner = await startServiceProcess('runner', { ...config, runner: { id: 'runner-0' }, nats: await roleNats('runner') }, dir)
    gateway = await startServiceProcess('gateway', { ...config, nats: await roleNats('gateway') }, dir)
  })

  afterAll(async () => {
    await client?.close()
    await gateway?.stop()
    await runner?.stop()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('roles - a tool-using turn, a second turn, replay from the stream, stop and version all work', async () => {
    client = await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent')
    client.send({ type: 'execute', request_id: 1, session_id: 'roles-1', prompt: 'tool: echo with roles' })
    await client.event('completed', 'roles-1')
    expect(client.eventsOf('roles-1').map((msg) => msg.event)).toEqual([
      'thinking',
      'answer',
      'tool_use',
      'tool_result',
      'answer',
      'session_stats',
      'completed',
    ])
    client.send({ type: 'execute', request_id: 2, session_id: 'roles-1', prompt: 'again' })
    await client.next((msg) => msg.request_id === 2 && msg.event === 'completed')
    // A second client resumes from sequence 1: the gateway replays from the stream (consumer API).
    const late = await WsClient.connect(gateway.address!.replace('http', 'ws') + '/ws/v1/agent?session_id=roles-1&last_seq=1')
    try {
      late.send({ type: 'attach', session_id: 'roles-1', last_seq: 1 })
      const replayed = await late.next((msg) => msg.event === 'completed' && msg.request_id === 2)
      expect(replayed.seq).toBeGreaterThan(1)
    } finally {
      await late.close()
    }
    client.send({ type: 'execute', session_id: 'roles-2', prompt: 'sleep: 60' })
    await client.event('tool_use', 'roles-2')
    client.send({ type: 'stop', session_id: 'roles-2', request_id: 'halt' })
    expect(await client.event('stopped', 'roles-2')).toMatchObject({ request_id: 'halt' })
    client.send({ type: 'version', request_id: 'v' })
    expect(await client.next((msg) => msg.request_id === 'v')).toMatchObject({ event: 'version' })
    // Nothing either part did was refused.
    expect((await readFile(serverLog, 'utf8')).split('\n').filter((line) => /Permissions Violation/i.test(line))).toEqual([])
    expect(gateway.output() + runner.output()).not.toMatch(/Permissions Violation/i)
  })
})
