/** The JetStream event log when NATS refuses some publishes for good, or the connection is closed for good: those events are dropped and logged, the rest flow, flush ends. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsBus } from '../../bus/mod.ts'
import { subjects, type ServiceEvent } from '../../contract/mod.ts'
import { JetStreamEventLog } from '../../state/jetstream-event-log.ts'
import { startPrivateNats, type NatsFixture } from '../fixtures/nats-server.ts'

const PREFIX = 'perm'

describe('event log - permissions', () => {
  let dir: string
  let nats: NatsFixture
  let bus: NatsBus
  const logLines: Record<string, unknown>[] = []

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-event-perm-'))
    const config = path.join(dir, 'nats.conf')
    // A runner user that may not publish the events of one session (a misconfigured permission).
    await writeFile(
      config,
      `authorization { users = [ { user: runner, password: r, permissions: { publish: { deny: ["${subjects(PREFIX).events('forbidden')}"] } } } ] }\n`,
    )
    nats = await startPrivateNats(['-c', config])
    bus = await NatsBus.connect(nats.url, { name: 'event-perm', logger: { warn: () => {} }, auth: { user: 'runner', password: 'r' } })
  })
  afterAll(async () => {
    await bus?.close()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('permissions - a refused event is dropped and logged at once; later events of other sessions are stored, flush does not hang', async () => {
    const log = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) })
    const events = await JetStreamEventLog.open(
      bus.connection,
      PREFIX,
      { storage: 'memory', replicas: 1, maxAgeMs: 3_600_000, perSession: 100, maxBytes: -1 },
      log,
    )
    const event = (sessionId: string, seq: number): ServiceEvent & { session_id: string; seq: number } => ({
      event: 'answer',
      data: `${sessionId} ${seq}`,
      session_id: sessionId,
      seq,
    })
    events.append(event('forbidden', 1))
    for (let seq = 1; seq <= 3; seq++) events.append(event('allowed', seq))
    await events.flush()
    expect((await events.read('allowed', 0)).map((stored) => stored.seq)).toEqual([1, 2, 3])
    expect(await events.read('forbidden', 0)).toEqual([])
    expect(logLines).toContainEqual(
      expect.objectContaining({ level: 50, subject: subjects(PREFIX).events('forbidden'), msg: expect.stringContaining('event dropped') }),
    )
    expect(logLines.filter((line) => String(line.msg).includes('retrying'))).toEqual([])
    await events.close()
  })

  it('closed for good - events of a connection that closed for good are dropped and logged, and flush ends (a shutdown waits for it)', async () => {
    const lines: Record<string, unknown>[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) })
    const own = await NatsBus.connect(nats.url, { name: 'event-closed', logger: { warn: () => {} }, auth: { user: 'runner', password: 'r' } })
    const events = await JetStreamEventLog.open(
      own.connection,
      PREFIX,
      { storage: 'memory', replicas: 1, maxAgeMs: 3_600_000, perSession: 100, maxBytes: -1 },
      log,
    )
    await own.connection.close()
    events.append({ event: 'answer', data: 'never stored', session_id: 'closed', seq: 1 })
    await events.flush()
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: 'event dropped: the NATS connection is closed for good' }))
    await events.close()
  })
})
