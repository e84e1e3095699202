import { describe, expect, it } from 'vitest'
import { ChatSessions } from '../../../gateway/chat/sessions.ts'
import type { ChatMessage } from '../../../gateway/chat/wire.ts'
import { captureLog, manualClock, manualEvery } from '../../fixtures/chat.ts'

const IDLE = 30 * 60_000

function message(conversation: string, user: string, content = 'hi', robotCode: string | undefined = 'robot-1'): ChatMessage {
  return { user_id: user, content, metadata: { conversation_id: conversation, ...(robotCode !== undefined && { robot_code: robotCode }) } }
}

function table() {
  const clock = manualClock()
  const closed: string[] = []
  const { log, lines } = captureLog()
  let n = 0
  let closeFails = false
  const sessions = new ChatSessions({
    idleMs: IDLE,
    close: async (id) => {
      if (closeFails) throw new Error('runner unavailable')
      closed.push(id)
    },
    log,
    now: clock.now,
    newSessionId: () => `s${++n}`,
  })
  return { sessions, clock, closed, lines, failClose: () => void (closeFails = true) }
}

const noWork = async () => {}

describe('chat sessions', () => {
  it('sessions - the first message of a key creates a session, later ones update LastActive', async () => {
    const { sessions, clock } = table()
    const first = sessions.enqueue(message('c1', 'u1'), noWork)
    expect(first).toMatchObject({ key: 'c1:u1', session_id: 's1', user_id: 'u1', platform: 'chat', conversation_id: 'c1', robot_code: 'robot-1' })
    const created = first.last_active
    clock.advance(1000)
    const second = sessions.enqueue(message('c1', 'u1'), noWork)
    expect(second.session_id).toBe('s1')
    expect(second.last_active).toBe(created + 1000)
    expect(sessions.enqueue(message('c1', 'u2'), noWork).session_id).toBe('s2')
    expect(sessions.enqueue(message('c2', 'u1'), noWork).session_id).toBe('s3')
    expect(sessions.size).toBe(3)
    await sessions.idle()
  })

  it('sessions - messages of one key are worked on one at a time, in order', async () => {
    const { sessions } = table()
    const log: string[] = []
    const gates = [Promise.withResolvers<void>(), Promise.withResolvers<void>(), Promise.withResolvers<void>()]
    for (const [i, gate] of gates.entries()) {
      sessions.enqueue(message('c1', 'u1', `m${i}`), async () => {
        log.push(`start m${i}`)
        await gate.promise
        log.push(`end m${i}`)
      })
    }
    await new Promise((resolve) => setImmediate(resolve))
    expect(log).toEqual(['start m0'])
    // Releasing a later message first changes nothing: it still waits its turn.
    gates[2]!.resolve()
    gates[1]!.resolve()
    await new Promise((resolve) => setImmediate(resolve))
    expect(log).toEqual(['start m0'])
    gates[0]!.resolve()
    await sessions.idle()
    expect(log).toEqual(['start m0', 'end m0', 'start m1', 'end m1', 'start m2', 'end m2'])
  })

  it('sessions - different keys run in parallel', async () => {
    const { sessions } = table()
    const slow = Promise.withResolvers<void>()
    const fastDone = Promise.withResolvers<void>()
    let slowDone = false
    sessions.enqueue(message('c1', 'u1'), async () => {
      await slow.promise
      slowDone = true
    })
    sessions.enqueue(message('c1', 'u2'), async () => fastDone.resolve())
    await fastDone.promise
    expect(slowDone).toBe(false)
    slow.resolve()
    await sessions.idle()
    expect(slowDone).toBe(true)
  })

  it('sessions - a failed work item is logged and the key goes on', async () => {
    const { sessions, lines } = table()
    const ran: string[] = []
    sessions.enqueue(message('c1', 'u1'), async () => {
      throw new Error('boom')
    })
    sessions.enqueue(message('c1', 'u1'), async () => void ran.push('second'))
    await sessions.idle()
    expect(ran).toEqual(['second'])
    expect(lines.find((l) => l.msg === 'chat work failed')).toMatchObject({ level: 'error', session_id: 's1', key: 'c1:u1' })
  })

  it('sessions - the sweep removes sessions idle longer than the time-out and frees their agent processes', async () => {
    const { sessions, clock, closed } = table()
    sessions.enqueue(message('c1', 'old'), noWork)
    await sessions.idle()
    clock.advance(10 * 60_000)
    sessions.enqueue(message('c1', 'recent'), noWork)
    await sessions.idle()
    clock.advance(IDLE - 10 * 60_000) // `old` idle exactly 30 min: not longer
    expect(await sessions.sweep()).toEqual([])
    clock.advance(1)
    expect(await sessions.sweep()).toEqual(['s1'])
    expect(closed).toEqual(['s1'])
    expect(sessions.get('c1:old')).toBeUndefined()
    expect(sessions.get('c1:recent')?.session_id).toBe('s2')
  })

  it('sessions - LastActive counts from the end of the work, and busy sessions are never swept', async () => {
    const { sessions, clock, closed } = table()
    const gate = Promise.withResolvers<void>()
    sessions.enqueue(message('c1', 'u1'), () => gate.promise)
    clock.advance(IDLE + 60_000)
    expect(await sessions.sweep()).toEqual([])
    gate.resolve()
    await sessions.idle()
    clock.advance(IDLE)
    expect(await sessions.sweep()).toEqual([])
    clock.advance(1)
    expect(await sessions.sweep()).toEqual(['s1'])
    expect(closed).toEqual(['s1'])
  })

  it('sessions - a message after removal starts a new session', async () => {
    const { sessions, clock } = table()
    sessions.enqueue(message('c1', 'u1'), noWork)
    await sessions.idle()
    clock.advance(IDLE + 1)
    await sessions.sweep()
    expect(sessions.enqueue(message('c1', 'u1'), noWork).session_id).toBe('s2')
    await sessions.idle()
  })

  it('sessions - a failed close is logged; the session is removed anyway', async () => {
    const { sessions, clock, lines, failClose } = table()
    sessions.enqueue(message('c1', 'u1'), noWork)
    await sessions.idle()
    failClose()
    clock.advance(IDLE + 1)
    expect(await sessions.sweep()).toEqual(['s1'])
    expect(sessions.size).toBe(0)
    expect(lines.find((l) => l.session_id === 's1' && l.level === 'warn')?.msg).toMatch(/freeing its agent process failed/)
  })

  it('sessions - the sweep runs on the configured interval until stopped', async () => {
    const { sessions, clock, closed } = table()
    const timers = manualEvery()
    const stop = sessions.startSweeping(5 * 60_000, timers.every)
    expect(timers.tasks.map((t) => t.ms)).toEqual([300_000])
    sessions.enqueue(message('c1', 'u1'), noWork)
    await sessions.idle()
    clock.advance(IDLE + 1)
    await timers.run()
    expect(closed).toEqual(['s1'])
    stop()
    sessions.enqueue(message('c1', 'u2'), noWork)
    await sessions.idle()
    clock.advance(IDLE + 1)
    await timers.run()
    expect(closed).toEqual(['s1'])
  })

  it('sessions - a later message without robotCode keeps the known one on the record', async () => {
    const { sessions } = table()
    sessions.enqueue(message('c1', 'u1', 'a', 'robot-1'), noWork)
    expect(sessions.enqueue(message('c1', 'u1', 'b', undefined), noWork).robot_code).toBe('robot-1')
    await sessions.idle()
  })
})
