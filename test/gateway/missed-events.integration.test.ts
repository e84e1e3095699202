import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MemoryBus, type BusMessage, type SubscribeOptions, type Subscription } from '../../bus/mod.ts'
import { subjects } from '../../contract/mod.ts'
import { buildGateway } from '../../gateway/server.ts'
import { startRunnerStack, type RunnerStack } from '../fixtures/runner.ts'
import { WsClient } from '../fixtures/ws-client.ts'

/** The in-process bus, except that it loses live events of a session as told (a gateway cut off for a moment). */
class LossyBus extends MemoryBus {
  /** Live events still to lose, by session. */
  readonly #losing = new Map<string, number>()
  readonly #subjects = subjects('test')

  lose(sessionId: string, events: number): void {
    this.#losing.set(this.#subjects.events(sessionId), events)
  }

  override subscribe(subject: string, handler: (msg: BusMessage) => void, options?: SubscribeOptions): Subscription {
    return super.subscribe(
      subject,
      (msg) => {
        const left = this.#losing.get(subject) ?? 0
        if (left === 0) return handler(msg)
        this.#losing.set(subject, left - 1)
      },
      options,
    )
  }
}

/**
 * The gateway learns where a turn it starts begins from the runner's answer,
 * so a client gets the whole turn even when its events are lost on the way:
 * the first ones, or every one of them.
 */
describe('events missed live', () => {
  const log = pino({ level: 'silent' })
  let runners: RunnerStack
  let bus: LossyBus
  let app: FastifyInstance
  let client: WsClient

  beforeEach(async () => {
    bus = new LossyBus()
    runners = await startRunnerStack({ overrides: { nats: { prefix: 'test' } }, bus })
    const state = runners.state
    app = await buildGateway({ bus, subjectPrefix: 'test', requestTimeoutMs: 5_000, log, state })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    client = await WsClient.connect(`${address.replace('http', 'ws')}/ws/v1/agent`)
  })
  afterEach(async () => {
    await client.close()
    await app.close()
    await runners.close()
  })

  it.each([
    ['a new session, every event of its turn lost live', false, Infinity],
    ['a new session, the first events lost, later ones live', false, 4],
    ['a followed session, every event of its next turn lost live', true, Infinity],
  ])('missed - %s: the client still gets the whole turn, each event once and in order', async (_name, followedBefore, lost) => {
    if (followedBefore) {
      client.send({ type: 'execute', session_id: 'lossy', prompt: 'first', request_id: 'before' })
      await client.next((msg) => msg.request_id === 'before' && msg.event === 'completed')
    }
    bus.lose('lossy', lost)
    client.send({ type: 'execute', session_id: 'lossy', prompt: 'stamped: 10 20', request_id: 'lost' })
    await client.next((msg) => msg.request_id === 'lost' && msg.event === 'completed')
    const turn = client.eventsOf('lossy').filter((event) => event.request_id === 'lost')
    expect(turn.map((event) => event.event)).toEqual([...Array(10).fill('answer'), 'session_stats', 'completed'])
    const seqs = client.eventsOf('lossy').map((event) => event.seq as number)
    expect(new Set(seqs).size).toBe(seqs.length)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
  })
})
