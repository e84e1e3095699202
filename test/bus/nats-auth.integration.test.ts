/** The NATS bus against servers that want credentials: each way of authenticating, and a clear error for a wrong one. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsBus, type NatsAuth } from '../../bus/mod.ts'
import { natsOperator } from '../fixtures/nats-jwt.ts'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'

const quiet = { warn: () => {} }

describe('NatsBus authentication', () => {
  let withUser: NatsFixture
  let withToken: NatsFixture
  let withJwt: NatsFixture
  let creds: string
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-nats-auth-'))
    const operator = await natsOperator(dir)
    creds = await operator.userCreds('svc')
    ;[withUser, withToken, withJwt] = await Promise.all([
      startPrivateNats(['--user', 'svc', '--pass', 's3cret']),
      startPrivateNats(['--auth', 'tok-123']),
      startPrivateNats(['-c', operator.serverConfig]),
    ])
  })
  afterAll(async () => {
    await Promise.all([withUser?.stop(), withToken?.stop(), withJwt?.stop()])
    await rm(dir, { recursive: true, force: true })
  })

  async function roundTrip(url: string, auth: NatsAuth | undefined): Promise<string> {
    const bus = await NatsBus.connect(url, { name: 'nats-auth-test', logger: quiet, auth })
    try {
      bus.subscribe('auth.echo', (msg) => msg.respond(`echo ${msg.data}`))
      return (await bus.request('auth.echo', 'hi', { timeoutMs: 2_000 })).data
    } finally {
      await bus.close()
    }
  }

  it.each([
    ['user and password', () => withUser.url, { user: 'svc', password: 's3cret' }],
    ['token', () => withToken.url, { token: 'tok-123' }],
    ['a .creds file (decentralized JWT auth)', () => withJwt.url, () => ({ credsFile: creds })],
  ] as const)('auth - %s: connects and works', async (_name, url, auth) => {
    expect(await roundTrip(url(), typeof auth === 'function' ? auth() : auth)).toBe('echo hi')
  })

  it.each([
    ['a wrong password', () => withUser.url, { user: 'svc', password: 'wrong' }],
    ['no credentials', () => withUser.url, undefined],
    ['a wrong token', () => withToken.url, { token: 'nope' }],
    ['no credentials where JWTs are required', () => withJwt.url, undefined],
  ] as const)('auth - %s: start-up fails and says why', async (_name, url, auth) => {
    const failure = NatsBus.connect(url(), { name: 'nats-auth-test', logger: quiet, auth })
    await expect(failure).rejects.toThrow(`cannot connect to NATS at ${url()}`)
    await expect(failure.catch((err: Error) => String((err.cause as Error | undefined)?.message))).resolves.toMatch(/authorization/i)
  })

  it('auth - a credentials file that is missing or not a creds file fails start-up naming it', async () => {
    const missing = path.join(dir, 'missing.creds')
    await expect(NatsBus.connect(withUser.url, { name: 'nats-auth-test', logger: quiet, auth: { credsFile: missing } })).rejects.toThrow(
      `cannot read the NATS credentials file ${missing}`,
    )
    const garbage = path.join(dir, 'garbage.creds')
    await writeFile(garbage, 'not a creds file\n')
    await expect(NatsBus.connect(withUser.url, { name: 'nats-auth-test', logger: quiet, auth: { credsFile: garbage } })).rejects.toThrow(
      `the NATS credentials file ${garbage} is not a .creds file`,
    )
  })
})
