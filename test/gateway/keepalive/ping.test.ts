import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import type { WebSocket } from 'ws'
import { keepAlive, type Timers } from '../../../gateway/keepalive/ping.ts'

function manualTimers(): Timers & { tick(): void; active: number } {
  const handles = new Map<number, () => void>()
  let next = 0
  return {
    setInterval(fn) {
      handles.set(++next, fn)
      return next
    },
    clearInterval(handle) {
      handles.delete(handle as number)
    },
    tick() {
      for (const fn of [...handles.values()]) fn()
    },
    get active() {
      return handles.size
    },
  }
}

/** A socket that records pings and terminations; the test decides whether pongs come. */
class FakeSocket extends EventEmitter {
  pings = 0
  terminated = false
  ping() {
    this.pings++
  }
  terminate() {
    this.terminated = true
    this.emit('close')
  }
}

describe('keepalive ping - dead clients are found', () => {
  it('ping - a client that answers every ping stays', () => {
    const timers = manualTimers()
    const socket = new FakeSocket()
    keepAlive(socket as unknown as WebSocket, 30_000, timers)
    for (let i = 0; i < 10; i++) {
      timers.tick()
      socket.emit('pong')
    }
    expect(socket.pings).toBe(10)
    expect(socket.terminated).toBe(false)
  })

  it('ping - a silent client is terminated at the tick after the unanswered ping, and the timer stops', () => {
    const timers = manualTimers()
    const socket = new FakeSocket()
    keepAlive(socket as unknown as WebSocket, 30_000, timers)
    timers.tick()
    expect(socket.pings).toBe(1)
    expect(socket.terminated).toBe(false)
    timers.tick()
    expect(socket.terminated).toBe(true)
    expect(timers.active).toBe(0)
  })

  it('ping - closing the socket stops the timer; interval 0 sends no pings', () => {
    const timers = manualTimers()
    const socket = new FakeSocket()
    keepAlive(socket as unknown as WebSocket, 30_000, timers)
    socket.emit('close')
    expect(timers.active).toBe(0)
    keepAlive(socket as unknown as WebSocket, 0, timers)
    expect(timers.active).toBe(0)
  })
})
