import { describe, expect, it } from 'vitest'
import { MemoryBus } from '../../bus/mod.ts'
import { errorReply, okReply, subjects } from '../../contract/mod.ts'
import { BUS_READY, busConnectionReadiness, busReadiness, Readiness, RUNNER_READY, type ReadinessChecks } from '../../observability/readiness.ts'
import { formatUptime } from '../../observability/uptime.ts'

const quiet = { logger: { error: () => {} } }

describe('readiness', () => {
  const counting = (results: ReadinessChecks[]) => {
    let calls = 0
    const check = async () => results[Math.min(calls++, results.length - 1)]!
    return { check, calls: () => calls }
  }

  it('cache - a passing result is reused for the ok TTL, a failing one only for the short fail TTL', async () => {
    let now = 0
    const ok = { engine: true, pool: true }
    const down = { engine: true, pool: false }
    const probe = counting([down, ok, ok])
    const readiness = new Readiness(probe.check, RUNNER_READY, { okTtlMs: 5_000, failTtlMs: 1_000, now: () => now })
    expect(await readiness.state()).toEqual({ ready: false, status: 'not_ready', checks: down })
    now = 999
    await readiness.state()
    expect(probe.calls()).toBe(1)
    now = 1_000
    expect(await readiness.state()).toEqual({ ready: true, status: 'ready', checks: ok })
    expect(probe.calls()).toBe(2)
    now = 5_999
    await readiness.state()
    expect(probe.calls()).toBe(2)
    now = 6_000
    await readiness.state()
    expect(probe.calls()).toBe(3)
  })

  it('cache - concurrent probes share one check in flight', async () => {
    const gate = Promise.withResolvers<ReadinessChecks>()
    let calls = 0
    const readiness = new Readiness(() => {
      calls++
      return gate.promise
    }, RUNNER_READY)
    const states = [readiness.state(), readiness.state(), readiness.state()]
    gate.resolve({ engine: true, pool: true })
    expect((await Promise.all(states)).map((state) => state.ready)).toEqual([true, true, true])
    expect(calls).toBe(1)
  })

  it('draining - not ready at once, with the last known checks, and no new check', async () => {
    let draining = false
    const probe = counting([{ engine: true, pool: true }])
    const readiness = new Readiness(probe.check, RUNNER_READY, { draining: () => draining, okTtlMs: 0 })
    expect((await readiness.state()).ready).toBe(true)
    draining = true
    expect(await readiness.state()).toEqual({ ready: false, status: 'draining', checks: { engine: true, pool: true } })
    expect(probe.calls()).toBe(1)
  })

  it('failure - a check that throws counts as both checks failing', async () => {
    const readiness = new Readiness(async () => {
      throw new Error('boom')
    }, RUNNER_READY)
    expect(await readiness.state()).toEqual({ ready: false, status: 'not_ready', checks: { engine: false, pool: false } })
  })

  it.each([
    // checks, runner policy (default), bus policy (server.readiness: bus, Kubernetes)
    [{ engine: true, pool: true }, true, false],
    [{ engine: true, pool: true, bus: true }, true, true],
    [{ engine: false, pool: false, bus: true }, false, true],
    [{ engine: true, pool: false, bus: true }, false, true],
    [{ engine: false, pool: true, bus: true }, false, true],
    [{ engine: true, pool: true, bus: false }, true, false],
    [{ engine: false, pool: false, bus: false }, false, false],
  ])('policy - %j: runner %s, bus %s', (checks, runner, bus) => {
    expect(RUNNER_READY.ready(checks)).toBe(runner)
    expect(BUS_READY.ready(checks)).toBe(bus)
  })

  it('policy - a failing check is never ready under either policy', () => {
    expect(RUNNER_READY.ready(RUNNER_READY.failed)).toBe(false)
    expect(BUS_READY.ready(BUS_READY.failed)).toBe(false)
  })

  it('bus policy - no runner at all (warm pool 0): ready, pool and engine shown false', async () => {
    const bus = new MemoryBus(quiet)
    const readiness = new Readiness(busConnectionReadiness(bus, 'p', 2_000), BUS_READY)
    expect(await readiness.state()).toEqual({ ready: true, status: 'ready', checks: { bus: true, engine: false, pool: false } })
    await bus.close()
  })

  it('bus - no runner: pool and engine false at once', async () => {
    const bus = new MemoryBus(quiet)
    expect(await busReadiness(bus, 'p', 2_000)()).toEqual({ engine: false, pool: false })
    await bus.close()
  })

  it('bus - a runner that answers ping but whose CLI fails --version: pool true, engine false', async () => {
    const bus = new MemoryBus(quiet)
    bus.subscribe(subjects('p').control, (msg) => {
      const { type } = JSON.parse(msg.data) as { type: string }
      msg.respond(type === 'ping' ? okReply('ping', { runner: 'r1' }) : errorReply({ code: 'ENGINE_START_FAILED', message: 'claude --version failed' }))
    })
    expect(await busReadiness(bus, 'p', 2_000)()).toEqual({ engine: false, pool: true })
    await bus.close()
  })

  it('bus - a runner that answers both: ready', async () => {
    const bus = new MemoryBus(quiet)
    bus.subscribe(subjects('p').control, (msg) => {
      const { type } = JSON.parse(msg.data) as { type: string }
      msg.respond(type === 'ping' ? okReply('ping', { runner: 'r1' }) : okReply('version', { version: '2.1.330 (Claude Code)', engine: 'claude' }))
    })
    expect(await busReadiness(bus, 'p', 2_000)()).toEqual({ engine: true, pool: true })
    await bus.close()
  })

  it('bus - a runner that does not answer in time: not ready after the ping time-out', async () => {
    const bus = new MemoryBus(quiet)
    bus.subscribe(subjects('p').control, () => {})
    expect(await busReadiness(bus, 'p', 50)()).toEqual({ engine: false, pool: false })
    await bus.close()
  })
})

describe('uptime', () => {
  it.each([
    [0, '0s'],
    [999, '0s'],
    [12_000, '12s'],
    [60_000, '1m0s'],
    [4 * 60_000 + 5_500, '4m5s'],
    [3_600_000, '1h0m0s'],
    [3_600_000 + 2 * 60_000 + 3_000, '1h2m3s'],
    [50 * 3_600_000, '50h0m0s'],
    [-5, '0s'],
  ])('format - %d ms is %s', (ms, text) => {
    expect(formatUptime(ms)).toBe(text)
  })
})
