import { describe, expect, it } from 'vitest'
import { SteeringWatch } from '../../client/steering-watch.ts'
import { allowed, answered, asked, question } from './steering-events.ts'

/** A watch whose deferred hand-over runs when the test says: the end of one read of messages. */
function watch() {
  const deferred: (() => void)[] = []
  const steering = new SteeringWatch((run) => deferred.push(run))
  const handed: string[] = []
  const signals: AbortSignal[] = []
  steering.onPermission((request, context) => {
    handed.push(request.permission.id)
    signals.push(context.signal)
  })
  steering.onQuestion((request) => handed.push(request.question.id))
  const readDone = () => deferred.splice(0).forEach((run) => run())
  return { steering, handed, signals, readDone }
}

describe('steering - SteeringWatch', () => {
  it('steering - an open request is handed to the handlers once the read is done, and once only', () => {
    const { steering, handed, readDone } = watch()
    steering.observe(asked('per_1', 1))
    expect(handed).toEqual([])
    readDone()
    steering.observe(asked('per_1', 1))
    readDone()
    expect(handed).toEqual(['per_1'])
  })

  it('steering - a replay that carries a request and its resolution asks nobody', () => {
    const { steering, handed, readDone } = watch()
    steering.observe(asked('per_1', 1))
    steering.observe(allowed('per_1', 2))
    steering.observe(question('que_2', 3))
    steering.observe(answered('que_2', 4))
    steering.observe(asked('per_3', 5))
    readDone()
    expect(handed).toEqual(['per_3'])
  })

  it('steering - the resolution aborts the signal with itself and resolves the context', async () => {
    const { steering, signals, readDone } = watch()
    let resolution: Promise<unknown> | undefined
    steering.onPermission((_, context) => (resolution = context.resolution))
    steering.observe(asked('per_1', 1))
    readDone()
    expect(signals[0]!.aborted).toBe(false)
    steering.observe(allowed('per_1', 2))
    expect(signals[0]!.aborted).toBe(true)
    expect(signals[0]!.reason).toMatchObject({ permission_id: 'per_1', decision: 'allow_once' })
    await expect(resolution).resolves.toMatchObject({ permission_id: 'per_1' })
  })

  it('steering - a handler registered late gets the requests still open, not the settled ones', () => {
    const { steering, readDone } = watch()
    steering.observe(asked('per_1', 1))
    steering.observe(asked('per_2', 2))
    readDone()
    steering.observe(allowed('per_1', 3))
    const late: string[] = []
    steering.onPermission((request) => late.push(request.permission.id))
    expect(late).toEqual(['per_2'])
  })

  it('steering - an unsubscribed handler is not called; closing aborts what waits', () => {
    const { steering, signals, readDone } = watch()
    const calls: string[] = []
    const off = steering.onPermission((request) => calls.push(request.permission.id))
    steering.observe(asked('per_1', 1))
    readDone()
    off()
    steering.observe(asked('per_2', 2))
    readDone()
    expect(calls).toEqual(['per_1'])
    steering.close(new Error('the client is closed'))
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true])
  })
})
