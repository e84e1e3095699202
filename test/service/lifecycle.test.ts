import { describe, expect, it } from 'vitest'
import { Lifecycle } from '../../service/lifecycle.ts'
import { gracefulShutdown } from '../../service/shutdown.ts'
import { captureLog } from '../fixtures/chat.ts'
import { until } from '../fixtures/until.ts'

describe('service lifecycle - draining and running work', () => {
  it('lifecycle - drain flips once and tells every listener once', () => {
    const lifecycle = new Lifecycle()
    const calls: string[] = []
    lifecycle.onDrain(() => calls.push('a'))
    const off = lifecycle.onDrain(() => calls.push('b'))
    off()
    lifecycle.onDrain(() => {
      throw new Error('a failing listener')
    })
    lifecycle.onDrain(() => calls.push('c'))
    expect(lifecycle.draining).toBe(false)
    lifecycle.drain()
    lifecycle.drain()
    expect(lifecycle.draining).toBe(true)
    expect(calls).toEqual(['a', 'c'])
    lifecycle.onDrain(() => calls.push('late'))
    expect(calls).toEqual(['a', 'c', 'late'])
  })

  it('lifecycle - busy sums the work sources', () => {
    const lifecycle = new Lifecycle()
    let gateway = 2
    lifecycle.addWork(() => gateway)
    const off = lifecycle.addWork(() => 3)
    expect(lifecycle.busy).toBe(5)
    off()
    gateway = 0
    expect(lifecycle.busy).toBe(0)
  })

  it('shutdown - drains at once, waits for the work to end, then stops', async () => {
    const lifecycle = new Lifecycle()
    let running = 1
    let counted = 0
    lifecycle.addWork(() => {
      counted++
      return running
    })
    const order: string[] = []
    const { log } = captureLog()
    const done = gracefulShutdown({ lifecycle, graceMs: 10_000, pollMs: 5, log, stop: async () => void order.push('stop') })
    expect(lifecycle.draining).toBe(true)
    // The shutdown counted the running work a few times over (at the start and in its polls), and has not stopped.
    await until(() => counted >= 5, 'the shutdown to count the running work five times')
    expect(order).toEqual([])
    running = 0
    await expect(done).resolves.toBe(true)
    expect(order).toEqual(['stop'])
  })

  it('shutdown - stops when the grace is over, and says so', async () => {
    const lifecycle = new Lifecycle()
    lifecycle.addWork(() => 1)
    const { log, lines } = captureLog()
    let stopped = false
    await expect(gracefulShutdown({ lifecycle, graceMs: 20, pollMs: 5, log, stop: async () => void (stopped = true) })).resolves.toBe(false)
    expect(stopped).toBe(true)
    expect(lines.some((line) => line.level === 'warn' && /grace period over/.test(line.msg))).toBe(true)
  })

  it('shutdown - an aborted signal (second SIGTERM) cuts the grace short', async () => {
    const lifecycle = new Lifecycle()
    lifecycle.addWork(() => 1)
    const { log } = captureLog()
    const hurry = new AbortController()
    const started = Date.now()
    const done = gracefulShutdown({ lifecycle, graceMs: 60_000, log, stop: async () => {}, signal: hurry.signal })
    setTimeout(() => hurry.abort(), 20)
    await expect(done).resolves.toBe(false)
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})
