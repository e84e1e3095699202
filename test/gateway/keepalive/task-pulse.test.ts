import { describe, expect, it } from 'vitest'
import type { EventOf, ServiceEvent } from '../../../contract/mod.ts'
import { TaskPulse, type PulseClock } from '../../../gateway/keepalive/task-pulse.ts'

/** A clock whose intervals fire only when the test advances it. */
function fakeClock(): PulseClock & { advance(ms: number): void; timers: number } {
  let now = 0
  let nextId = 0
  const timers = new Map<number, { fn: () => void; ms: number; due: number }>()
  return {
    now: () => now,
    setInterval(fn, ms) {
      const id = ++nextId
      timers.set(id, { fn, ms, due: now + ms })
      return id
    },
    clearInterval(handle) {
      timers.delete(handle as number)
    },
    advance(ms) {
      const end = now + ms
      for (;;) {
        const next = [...timers.values()].filter((t) => t.due <= end).sort((a, b) => a.due - b.due)[0]
        if (!next) break
        now = next.due
        next.due += next.ms
        next.fn()
      }
      now = end
    },
    get timers() {
      return timers.size
    },
  }
}

const toolUse = (session: string, id: string, turn = 't1'): ServiceEvent => ({
  event: 'tool_use',
  session_id: session,
  turn_id: turn,
  seq: 4,
  data: 'Bash',
  tool: { id, name: 'Bash', input: { command: 'sleep 60' } },
})
const toolResult = (session: string, id: string, turn = 't1'): ServiceEvent => ({
  event: 'tool_result',
  session_id: session,
  turn_id: turn,
  seq: 5,
  data: '',
  tool: { id, name: 'Bash' },
  is_error: false,
})

describe('keepalive task pulse - task_boundary while a tool runs', () => {
  it('task pulse - one pulse per interval while the tool runs, none after its result', () => {
    const clock = fakeClock()
    const sent: EventOf<'task_boundary'>[] = []
    const pulse = new TaskPulse((event) => sent.push(event), 30_000, clock)
    pulse.observe(toolUse('s1', 'toolu_1'))
    clock.advance(29_999)
    expect(sent).toEqual([])
    clock.advance(1)
    expect(sent).toEqual([
      { event: 'task_boundary', session_id: 's1', turn_id: 't1', data: 'tool running', tool: { id: 'toolu_1', name: 'Bash' }, elapsed_ms: 30_000, ts: 30_000 },
    ])
    clock.advance(60_000)
    expect(sent.map((event) => event.elapsed_ms)).toEqual([30_000, 60_000, 90_000])
    pulse.observe(toolResult('s1', 'toolu_1'))
    clock.advance(120_000)
    expect(sent).toHaveLength(3)
    expect(clock.timers).toBe(0)
    // Not part of the session's sequence.
    expect(sent.every((event) => event.seq === undefined)).toBe(true)
  })

  it('task pulse - parallel tools each pulse; the end of the turn ends them all', () => {
    const clock = fakeClock()
    const sent: EventOf<'task_boundary'>[] = []
    const pulse = new TaskPulse((event) => sent.push(event), 1_000, clock)
    pulse.observe(toolUse('s1', 'a'))
    pulse.observe(toolUse('s1', 'b'))
    pulse.observe(toolUse('s2', 'a', 't9'))
    clock.advance(1_000)
    expect(sent.map((event) => `${event.session_id}/${event.tool.id}`).sort()).toEqual(['s1/a', 's1/b', 's2/a'])
    pulse.observe({ event: 'stopped', session_id: 's1', turn_id: 't1', seq: 9 })
    expect(pulse.running).toBe(1)
    clock.advance(1_000)
    expect(sent.slice(3).map((event) => event.session_id)).toEqual(['s2'])
    pulse.close()
    expect(clock.timers).toBe(0)
  })

  it('task pulse - a tool_use seen twice (a replay) is timed once; 0 disables pulses', () => {
    const clock = fakeClock()
    const sent: unknown[] = []
    const pulse = new TaskPulse((event) => sent.push(event), 1_000, clock)
    pulse.observe(toolUse('s1', 'a'))
    pulse.observe(toolUse('s1', 'a'))
    clock.advance(1_000)
    expect(sent).toHaveLength(1)
    const off = new TaskPulse((event) => sent.push(event), 0, clock)
    off.observe(toolUse('s1', 'z'))
    expect(off.running).toBe(0)
  })

  it('task pulse - a denied tool call (error with tool) is not a turn end', () => {
    const clock = fakeClock()
    const sent: unknown[] = []
    const pulse = new TaskPulse((event) => sent.push(event), 1_000, clock)
    pulse.observe(toolUse('s1', 'a'))
    pulse.observe({
      event: 'error',
      session_id: 's1',
      turn_id: 't1',
      data: 'denied',
      error: { code: 'WAF_BLOCKED', message: 'denied' },
      tool: { name: 'Bash' },
    })
    expect(pulse.running).toBe(1)
  })
})
