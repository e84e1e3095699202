import { describe, expect, it } from 'vitest'
import type { ServiceEvent } from '../../../contract/mod.ts'
import { ActiveSessions } from '../../../gateway/limits/active-sessions.ts'

/** A stand-in for SessionHub.attach that the test feeds by hand. */
function hub() {
  const listeners = new Map<string, Set<(event: ServiceEvent) => void>>()
  return {
    attach(sessionId: string, listener: (event: ServiceEvent) => void) {
      let set = listeners.get(sessionId)
      if (!set) listeners.set(sessionId, (set = new Set()))
      set.add(listener)
      return () => set.delete(listener)
    },
    emit(event: ServiceEvent) {
      for (const listener of listeners.get(event.session_id!) ?? []) listener(event)
    },
    attached: (sessionId: string) => listeners.get(sessionId)?.size ?? 0,
  }
}

describe('limits active sessions - sessions with a turn running or queued', () => {
  it('active sessions - counts sessions, not turns, and frees a session when its last turn ends', () => {
    const events = hub()
    const active = new ActiveSessions(0, events.attach)
    active.admit('s1', 't1')
    active.admit('s1', 't2')
    active.admit('s2', 't3')
    expect(active.count).toBe(2)
    events.emit({ event: 'completed', session_id: 's1', turn_id: 't1', stats: {} as never, turn_stats: {} as never })
    expect(active.count).toBe(2)
    events.emit({ event: 'stopped', session_id: 's1', turn_id: 't2' })
    expect(active.count).toBe(1)
    expect(events.attached('s1')).toBe(0)
    events.emit({ event: 'error', session_id: 's2', turn_id: 't3', data: 'x', error: { code: 'ENGINE_ERROR', message: 'x' } })
    expect(active.count).toBe(0)
  })

  it('active sessions - over the limit a new session is OVERLOADED; an active one may still queue', () => {
    const events = hub()
    const active = new ActiveSessions(1, events.attach)
    active.admit('s1', 't1')
    expect(() => active.admit('s2', 't2')).toThrow(expect.objectContaining({ code: 'OVERLOADED', status: 503 }))
    expect(() => active.admit('s1', 't3')).not.toThrow()
    events.emit({ event: 'stopped', session_id: 's1', turn_id: 't1' })
    events.emit({ event: 'stopped', session_id: 's1', turn_id: 't3' })
    expect(() => active.admit('s2', 't2')).not.toThrow()
  })

  it('active sessions - a failed execute releases its turn; a denied tool call (error with tool) does not end the turn', () => {
    const events = hub()
    const active = new ActiveSessions(1, events.attach)
    const release = active.admit('s1', 't1')
    events.emit({ event: 'error', session_id: 's1', turn_id: 't1', data: 'denied', error: { code: 'WAF_BLOCKED', message: 'denied' }, tool: { name: 'Bash' } })
    expect(active.count).toBe(1)
    release()
    expect(active.count).toBe(0)
    release()
    expect(active.count).toBe(0)
  })

  it('active sessions - events of other turns and stops without a turn change nothing', () => {
    const events = hub()
    const active = new ActiveSessions(0, events.attach)
    active.admit('s1', 't1')
    events.emit({ event: 'completed', session_id: 's1', turn_id: 'other', stats: {} as never, turn_stats: {} as never })
    events.emit({ event: 'stopped', session_id: 's1' })
    expect(active.count).toBe(1)
  })
})
