/** What only the NATS bus has: connecting, the connection's status, server restarts. */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { BusClosedError, BusTimeoutError, NatsBus, type NatsBusStatus } from '../../bus/mod.ts'
import { freePort, startNats, startOwnNats, type NatsFixture } from '../fixtures/nats-server.ts'

const quiet = { warn: () => {} }
/** Subjects of this run only, in case NATS_URL points at a shared server. */
const P = `nats-test.${process.pid}.${Date.now().toString(36)}`

describe('NatsBus', () => {
  let nats: NatsFixture
  const open: NatsBus[] = []
  const connect = async () => {
    const bus = await NatsBus.connect(nats.url, { name: 'nats-test', logger: quiet })
    open.push(bus)
    return bus
  }

  beforeAll(async () => {
    nats = await startNats()
  })
  afterAll(async () => {
    await nats?.stop()
  })
  afterEach(async () => {
    await Promise.all(open.splice(0).map((bus) => bus.close()))
  })

  it('connect - fails at once when nothing listens at the URL', async () => {
    const started = Date.now()
    await expect(NatsBus.connect(`nats://127.0.0.1:${await freePort()}`, { name: 'nats-test', logger: quiet })).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('status - connected after connect, not after close', async () => {
    const bus = await connect()
    const seen: NatsBusStatus['type'][] = []
    bus.onStatus((s) => seen.push(s.type))
    expect(bus.isConnected()).toBe(true)
    await bus.close()
    expect(bus.isConnected()).toBe(false)
    await vi.waitFor(() => expect(seen).toContain('close'))
  })

  it('close - rejects a pending request with BusClosedError', async () => {
    const bus = await connect()
    bus.subscribe(`${P}.slow`, () => {})
    await bus.flush()
    const pending = bus.request(`${P}.slow`, '', { timeoutMs: 10_000 }).catch((e: unknown) => e)
    await bus.close()
    expect(await pending).toBeInstanceOf(BusClosedError)
  })

  it('close - publish and flush afterwards throw BusClosedError', async () => {
    const bus = await connect()
    await bus.close()
    expect(() => bus.publish(`${P}.x`, '')).toThrow(BusClosedError)
    await expect(bus.flush()).rejects.toBeInstanceOf(BusClosedError)
  })
})

describe('NatsBus across server restarts', () => {
  let nats: Required<NatsFixture>
  const open: NatsBus[] = []
  const connect = async () => {
    const bus = await NatsBus.connect(nats.url, { name: 'nats-restart-test', logger: quiet })
    open.push(bus)
    return bus
  }

  beforeAll(async () => {
    nats = await startOwnNats()
  })
  afterAll(async () => {
    await nats?.stop()
  })
  afterEach(async () => {
    await Promise.all(open.splice(0).map((bus) => bus.close()))
  })

  it('restart - reports disconnect and reconnect, and subscriptions work again', async () => {
    const bus = await connect()
    const statuses: NatsBusStatus['type'][] = []
    bus.onStatus((s) => statuses.push(s.type))
    const got: string[] = []
    bus.subscribe(`${P}.restart`, (m) => {
      got.push(m.data)
      m.respond('pong')
    })
    await bus.flush()

    await nats.restart({ downMs: 300 })
    await vi.waitFor(() => expect(statuses).toEqual(['disconnect', 'reconnect']), { timeout: 5_000 })
    expect(bus.isConnected()).toBe(true)

    const reply = await bus.request(`${P}.restart`, 'ping', { timeoutMs: 2_000 })
    expect(reply.data).toBe('pong')
    expect(got).toEqual(['ping'])
  })

  it('restart - a request while the server is down times out instead of hanging', async () => {
    const bus = await connect()
    const down = new Promise<void>((resolve) => bus.onStatus((s) => s.type === 'disconnect' && resolve()))
    const restarted = nats.restart({ downMs: 1_000 })
    await down
    expect(bus.isConnected()).toBe(false)
    const err = await bus.request(`${P}.down`, '', { timeoutMs: 200 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BusTimeoutError)
    await restarted
  })
})
