import { describe, expect, it } from 'vitest'
import { AgentClient } from '../../client/client.ts'
import type { SocketHandlers } from '../../client/transport.ts'
import { ServiceError } from '../../contract/errors.ts'
import type { ServiceEvent } from '../../contract/events.ts'
import { until } from '../fixtures/until.ts'
import { allowed, asked, question } from './steering-events.ts'

/** The service's side of the client's connections, in process: what the client sent, and events to send it. */
function scriptedService() {
  const connections: { sent: Record<string, unknown>[]; handlers: SocketHandlers }[] = []
  const open = async (_url: string, _key: string | undefined, handlers: SocketHandlers) => {
    const connection = { sent: [] as Record<string, unknown>[], handlers }
    connections.push(connection)
    return { send: (text: string) => void connection.sent.push(JSON.parse(text) as Record<string, unknown>), close: () => handlers.closed(1000, '') }
  }
  const current = () => connections.at(-1)!
  return {
    open,
    connections,
    send: (...events: ServiceEvent[]) => events.forEach((event) => current().handlers.message(JSON.stringify(event))),
    sentOf: (type: string) => current().sent.filter((frame) => frame.type === type),
    drop: () => current().handlers.closed(1006, ''),
  }
}

/** Handlers run on the next turn of the event loop after the read that brought their request: after it, nothing more is coming. */
const afterRead = () => new Promise((resolve) => setTimeout(resolve, 0))

async function started() {
  const service = scriptedService()
  const client = await new AgentClient({ url: 'http://service.test', retry: { baseMs: 1, maxAttempts: 3 } }, service.open).start()
  const session = client.session('s')
  const handed: string[] = []
  session.onPermission((request) => handed.push(request.permission.id))
  session.onQuestion((request) => handed.push(request.question.id))
  return { service, client, session, handed }
}

describe('client - steering over the native protocol', () => {
  it('client - permissionReply sends the frame and resolves with the resolution of that request', async () => {
    const { service, client, session } = await started()
    const reply = session.permissionReply('per_1', 'allow_once')
    expect(service.sentOf('permission_reply')).toEqual([
      { type: 'permission_reply', request_id: expect.any(String), session_id: 's', permission_id: 'per_1', decision: 'allow_once' },
    ])
    service.send(allowed('per_2', 1), allowed('per_1', 2))
    await expect(reply).resolves.toMatchObject({ event: 'permission_resolved', permission_id: 'per_1' })
    client.close()
  })

  it('client - answer and reject send their frames; an error for the frame rejects with its code', async () => {
    const { service, client, session } = await started()
    const answer = session.answer('que_1', [['Red']])
    const reject = session.reject('que_2', 'not now')
    const [answerFrame, rejectFrame] = [service.sentOf('answer')[0]!, service.sentOf('reject')[0]!]
    expect(answerFrame).toMatchObject({ session_id: 's', question_id: 'que_1', answers: [['Red']] })
    expect(rejectFrame).toMatchObject({ session_id: 's', question_id: 'que_2', message: 'not now' })
    service.send({
      event: 'error',
      session_id: 's',
      request_id: answerFrame.request_id as string,
      data: 'answered',
      error: { code: 'ALREADY_ANSWERED', message: 'que_1 was answered' },
    })
    service.send({
      event: 'error',
      session_id: 's',
      request_id: rejectFrame.request_id as string,
      data: 'unknown',
      error: { code: 'PERMISSION_NOT_FOUND', message: 'no que_2' },
    })
    const [answered, rejected] = await Promise.all([answer.catch((err: unknown) => err), reject.catch((err: unknown) => err)])
    expect(answered).toBeInstanceOf(ServiceError)
    expect((answered as ServiceError).code).toBe('ALREADY_ANSWERED')
    expect((rejected as ServiceError).code).toBe('PERMISSION_NOT_FOUND')
    client.close()
  })

  it('client - handlers get each open request once; one replayed with its resolution is not handed over', async () => {
    const { service, client, session, handed } = await started()
    const events = session.follow()
    service.send(asked('per_1', 1), allowed('per_1', 2), asked('per_2', 3), question('que_3', 4))
    await until(() => handed.length === 2, 'the open requests handed over')
    expect(handed).toEqual(['per_2', 'que_3'])
    // The connection drops; the client attaches after the last sequence it saw and the service replays, a repeat included.
    service.drop()
    await until(() => service.connections.length === 2 && service.sentOf('attach').length === 1, 'the attach after the reconnection')
    expect(service.sentOf('attach')[0]).toMatchObject({ session_id: 's', last_seq: 4 })
    service.send(question('que_3', 4), asked('per_5', 5))
    await until(() => handed.length === 3, 'the new request handed over')
    await afterRead()
    expect(handed).toEqual(['per_2', 'que_3', 'per_5'])
    void events.return?.()
    client.close()
  })

  it('client - an answer sent before the drop is not sent again; its resolution in the replay settles it', async () => {
    const { service, client, session } = await started()
    service.send(asked('per_1', 1))
    const reply = session.permissionReply('per_1', 'deny', 'no')
    service.drop()
    await until(() => service.connections.length === 2 && service.sentOf('attach').length === 1, 'the attach after the reconnection')
    expect(service.sentOf('attach')[0]).toMatchObject({ session_id: 's', last_seq: 1 })
    expect(service.sentOf('permission_reply')).toEqual([])
    service.send({ ...allowed('per_1', 2), decision: 'deny' } as ServiceEvent)
    await expect(reply).resolves.toMatchObject({ decision: 'deny' })
    client.close()
  })

  it('client - closing rejects the answers still waiting and aborts the handlers', async () => {
    const { service, client, session } = await started()
    let signal: AbortSignal | undefined
    session.onPermission((_, context) => (signal = context.signal))
    service.send(asked('per_1', 1))
    await until(() => signal !== undefined, 'the request handed over')
    const reply = session.permissionReply('per_1', 'allow_once')
    client.close()
    await expect(reply).rejects.toThrow('closed')
    expect(signal!.aborted).toBe(true)
  })
})
