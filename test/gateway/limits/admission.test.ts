import { describe, expect, it } from 'vitest'
import { ServiceError, type Command, type ReplyOf } from '../../../contract/mod.ts'
import { ActiveSessions } from '../../../gateway/limits/active-sessions.ts'
import { AdmittingRunners } from '../../../gateway/limits/admission.ts'
import type { Runners } from '../../../gateway/runners.ts'

/** Runners that answer every command, or refuse the execute of `refuse`. */
function innerRunners(refuse?: string): Runners & { sent: string[]; recovered: string[][] } {
  const sent: string[] = []
  const recovered: string[][] = []
  return {
    sent,
    recovered,
    async send<C extends Command>(command: C): Promise<ReplyOf<C['type']>> {
      sent.push(command.type)
      if (command.type === 'execute' && command.session_id === refuse) throw new ServiceError('RUNNER_UNAVAILABLE', 'none')
      return (command.type === 'execute' ? { turn_id: command.turn_id, queued: 0 } : { stopped: true }) as ReplyOf<C['type']>
    },
    async recoverLost(sessionIds) {
      recovered.push([...sessionIds])
    },
  }
}

const execute = (sessionId: string, turnId = `turn_${sessionId}`) => ({ type: 'execute' as const, session_id: sessionId, turn_id: turnId, prompt: 'hi' })
const noEvents = () => () => {}

describe('admission - a decorator around Runners', () => {
  it('admission - while draining, an execute is SHUTTING_DOWN and never sent; a stop still passes', async () => {
    const inner = innerRunners()
    const runners = new AdmittingRunners(inner, new ActiveSessions(0, noEvents), { draining: true, addWork: () => () => {} })
    await expect(runners.send(execute('s1'))).rejects.toMatchObject({ code: 'SHUTTING_DOWN' })
    expect(await runners.send({ type: 'stop', session_id: 's1' })).toEqual({ stopped: true })
    expect(inner.sent).toEqual(['stop'])
  })

  it('admission - over max_active_sessions a new session is OVERLOADED; the active one may queue more', async () => {
    const inner = innerRunners()
    const active = new ActiveSessions(1, noEvents)
    const runners = new AdmittingRunners(inner, active)
    await runners.send(execute('s1', 't1'))
    await expect(runners.send(execute('s2'))).rejects.toMatchObject({ code: 'OVERLOADED' })
    await runners.send(execute('s1', 't2'))
    expect(active.count).toBe(1)
    expect(inner.sent).toEqual(['execute', 'execute'])
  })

  it('admission - an execute the runners refuse frees its place', async () => {
    const active = new ActiveSessions(1, noEvents)
    const runners = new AdmittingRunners(innerRunners('s1'), active)
    await expect(runners.send(execute('s1'))).rejects.toMatchObject({ code: 'RUNNER_UNAVAILABLE' })
    expect(active.count).toBe(0)
  })

  it('admission - recovery goes straight through', async () => {
    const inner = innerRunners()
    await new AdmittingRunners(inner, new ActiveSessions(0, noEvents)).recoverLost(['s1', 's2'])
    expect(inner.recovered).toEqual([['s1', 's2']])
  })
})
