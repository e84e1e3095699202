/**
 * One behaviour contract, run against every Bus implementation: the in-process
 * bus of dev mode must behave like NATS, so code tested on one works on the other.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BusClosedError, BusNoRespondersError, BusTimeoutError, MemoryBus, NatsBus, type Bus, type BusMessage } from '../../bus/mod.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'

/** Creates a bus; an exception thrown by a handler is passed to `onHandlerError` if the bus reports it that way. */
type BusFactory = (onHandlerError: (err: unknown) => void) => Promise<Bus>

let subjectSeq = 0
/** A subject prefix no other test uses, so tests sharing a server stay apart. */
function uniquePrefix(): string {
  return `contract.${process.pid}.${Date.now().toString(36)}.${subjectSeq++}`
}

/** Resolves when `count` messages have arrived; `messages` holds them in arrival order. */
function collector(count: number) {
  const messages: BusMessage[] = []
  let done!: () => void
  const all = new Promise<void>((resolve) => (done = resolve))
  const handler = (msg: BusMessage) => {
    messages.push(msg)
    if (messages.length === count) done()
  }
  return { messages, handler, all }
}

/**
 * Publishes a sentinel and waits for it: a bus delivers one publisher's
 * messages to one subscriber in order, so everything published before has arrived.
 */
async function settle(bus: Bus, prefix: string): Promise<void> {
  const subject = `${prefix}.sentinel.${subjectSeq++}`
  const seen = collector(1)
  const sub = bus.subscribe(subject, seen.handler)
  await bus.flush()
  bus.publish(subject, '')
  await seen.all
  sub.unsubscribe()
}

function busContract(name: string, factory: BusFactory, setup?: { beforeAll(): Promise<void>; afterAll(): Promise<void> }) {
  describe(`bus contract: ${name}`, () => {
    const open: Bus[] = []
    let handlerErrors: unknown[] = []
    const create = async () => {
      const bus = await factory((err) => handlerErrors.push(err))
      open.push(bus)
      return bus
    }

    if (setup) {
      beforeAll(setup.beforeAll)
      afterAll(setup.afterAll)
    }
    afterEach(async () => {
      handlerErrors = []
      await Promise.all(open.splice(0).map((bus) => bus.close()))
    })

    it('bus - delivers published messages with their headers', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const got = collector(1)
      bus.subscribe(`${p}.a`, got.handler)
      await bus.flush()
      bus.publish(`${p}.a`, '{"n":1}', { 'x-trace': 'abc' })
      await got.all
      expect(got.messages[0]).toMatchObject({ subject: `${p}.a`, data: '{"n":1}', headers: { 'x-trace': 'abc' } })
    })

    it("bus - hands the publisher's object to subscribers in this process only; over NATS they get the text alone", async () => {
      const bus = await create()
      const p = uniquePrefix()
      const got = collector(2)
      bus.subscribe(`${p}.v`, got.handler)
      await bus.flush()
      const value = { n: 1 }
      bus.publish(`${p}.v`, JSON.stringify(value), undefined, value)
      bus.publish(`${p}.v`, '{"n":2}')
      await got.all
      expect(got.messages.map((m) => m.data)).toEqual(['{"n":1}', '{"n":2}'])
      expect(got.messages[0]!.value).toBe(bus.kind === 'memory' ? value : undefined)
      expect('value' in got.messages[1]!).toBe(false)
    })

    it('bus - keeps one publisher’s order over 1,000 messages', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const count = 1_000
      const got = collector(count)
      bus.subscribe(`${p}.seq`, got.handler)
      await bus.flush()
      for (let i = 0; i < count; i++) bus.publish(`${p}.seq`, String(i))
      await got.all
      expect(got.messages.map((m) => Number(m.data))).toEqual(Array.from({ length: count }, (_, i) => i))
    })

    it('bus - matches exact subjects, `*` one token and `>` the rest', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const seen: Record<string, string[]> = { exact: [], star: [], tail: [] }
      bus.subscribe(`${p}.a.b`, (m) => seen.exact!.push(m.subject))
      bus.subscribe(`${p}.*.b`, (m) => seen.star!.push(m.subject))
      bus.subscribe(`${p}.a.>`, (m) => seen.tail!.push(m.subject))
      await bus.flush()
      for (const s of ['a.b', 'x.b', 'a.b.c', 'a', 'a.c.d.e', 'x.y.b']) bus.publish(`${p}.${s}`, '')
      await settle(bus, p)
      expect(seen).toEqual({
        exact: [`${p}.a.b`],
        star: [`${p}.a.b`, `${p}.x.b`],
        tail: [`${p}.a.b`, `${p}.a.b.c`, `${p}.a.c.d.e`],
      })
    })

    it('bus - gives each message to exactly one queue group member, and every member some', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const count = 200
      const first: string[] = []
      const second: string[] = []
      const plain: string[] = []
      bus.subscribe(`${p}.work`, (m) => first.push(m.data), { queue: 'workers' })
      bus.subscribe(`${p}.work`, (m) => second.push(m.data), { queue: 'workers' })
      bus.subscribe(`${p}.work`, (m) => plain.push(m.data))
      await bus.flush()
      for (let i = 0; i < count; i++) bus.publish(`${p}.work`, String(i))
      await settle(bus, p)
      expect(first.length).toBeGreaterThan(0)
      expect(second.length).toBeGreaterThan(0)
      expect([...first, ...second].map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i))
      // A subscriber outside the group still sees everything.
      expect(plain).toHaveLength(count)
    })

    it('bus - answers a request, headers passing both ways', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const requests: BusMessage[] = []
      bus.subscribe(`${p}.echo`, (m) => {
        requests.push(m)
        m.respond(m.data.toUpperCase(), { 'x-replied-by': 'echo', 'x-trace': m.headers?.['x-trace'] ?? '' })
      })
      await bus.flush()
      const reply = await bus.request(`${p}.echo`, 'hello', { timeoutMs: 2_000, headers: { 'x-trace': 't-1' } })
      expect(reply.data).toBe('HELLO')
      expect(reply.headers).toEqual({ 'x-replied-by': 'echo', 'x-trace': 't-1' })
      expect(requests[0]?.headers).toEqual({ 'x-trace': 't-1' })
    })

    it('bus - answers a request within a queue group once', async () => {
      const bus = await create()
      const p = uniquePrefix()
      let answered = 0
      for (const id of ['r1', 'r2']) {
        bus.subscribe(
          `${p}.cmd`,
          (m) => {
            answered++
            m.respond(id)
          },
          { queue: 'runners' },
        )
      }
      await bus.flush()
      for (let i = 0; i < 10; i++) {
        const reply = await bus.request(`${p}.cmd`, '', { timeoutMs: 2_000 })
        expect(['r1', 'r2']).toContain(reply.data)
      }
      expect(answered).toBe(10)
    })

    it('bus - rejects a request at once with BusNoRespondersError when nobody subscribes', async () => {
      const bus = await create()
      const started = Date.now()
      const err = await bus.request(`${uniquePrefix()}.nobody`, '', { timeoutMs: 5_000 }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(BusNoRespondersError)
      expect(Date.now() - started).toBeLessThan(1_000)
    })

    it('bus - rejects with BusTimeoutError when the subscriber never answers', async () => {
      const bus = await create()
      const p = uniquePrefix()
      bus.subscribe(`${p}.silent`, () => {})
      await bus.flush()
      const started = Date.now()
      const err = await bus.request(`${p}.silent`, '', { timeoutMs: 200 }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(BusTimeoutError)
      expect(Date.now() - started).toBeGreaterThanOrEqual(190)
    })

    it('bus - stops delivery after unsubscribe', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const got: string[] = []
      const sub = bus.subscribe(`${p}.x`, (m) => got.push(m.data))
      await bus.flush()
      bus.publish(`${p}.x`, 'before')
      await settle(bus, p)
      sub.unsubscribe()
      bus.publish(`${p}.x`, 'after')
      await settle(bus, p)
      expect(got).toEqual(['before'])
    })

    it('bus - keeps delivering after a handler throws, and reports the throw', async () => {
      const bus = await create()
      const p = uniquePrefix()
      const boom = new Error('handler bug')
      const got: string[] = []
      bus.subscribe(`${p}.x`, (m) => {
        got.push(m.data)
        if (m.data === '1') throw boom
      })
      await bus.flush()
      for (const data of ['1', '2', '3']) bus.publish(`${p}.x`, data)
      await settle(bus, p)
      expect(got).toEqual(['1', '2', '3'])
      expect(handlerErrors).toEqual([boom])
    })

    it('bus - rejects requests and subscriptions after close with BusClosedError', async () => {
      const bus = await create()
      const p = uniquePrefix()
      bus.subscribe(`${p}.x`, (m) => m.respond('ok'))
      await bus.flush()
      await bus.close()
      const err = await bus.request(`${p}.x`, '', { timeoutMs: 1_000 }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(BusClosedError)
      expect(() => bus.subscribe(`${p}.y`, () => {})).toThrow(BusClosedError)
      expect(() => bus.publish(`${p}.x`, 'lost?')).toThrow(BusClosedError)
      await expect(bus.flush()).rejects.toBeInstanceOf(BusClosedError)
      await bus.close() // idempotent
    })

    it('bus - ends a request still waiting at close with BusClosedError', async () => {
      const bus = await create()
      const p = uniquePrefix()
      bus.subscribe(`${p}.silent`, () => {})
      await bus.flush()
      const pending = bus.request(`${p}.silent`, '', { timeoutMs: 10_000 }).catch((e: unknown) => e)
      await bus.close()
      expect(await pending).toBeInstanceOf(BusClosedError)
    })
  })
}

busContract('memory', async (onHandlerError) => new MemoryBus({ logger: { error: (obj) => onHandlerError((obj as { err?: unknown }).err) } }))

let nats: NatsFixture | undefined
busContract(
  'nats',
  async (onHandlerError) =>
    NatsBus.connect(nats!.url, {
      name: 'bus-contract',
      logger: {
        warn: () => {},
        error: (obj) => onHandlerError((obj as { err?: unknown }).err),
      },
    }),
  {
    beforeAll: async () => {
      nats = await startNats()
    },
    afterAll: async () => {
      await nats?.stop()
    },
  },
)
