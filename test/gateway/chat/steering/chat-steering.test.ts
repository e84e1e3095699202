import { describe, expect, it } from 'vitest'
import { ServiceError, type Command, type ServiceEvent } from '../../../../contract/mod.ts'
import type { ChatSession } from '../../../../gateway/chat/sessions.ts'
import { ChatSteering } from '../../../../gateway/chat/steering/chat-steering.ts'
import { captureLog } from '../../../fixtures/chat.ts'

const session: ChatSession = {
  key: 'c1:u1',
  session_id: 'chat-1',
  user_id: 'u1',
  platform: 'chat',
  conversation_id: 'c1',
  robot_code: 'r',
  created_at: 0,
  last_active: 0,
}

const asks = (id: string, command = 'touch canary'): ServiceEvent =>
  ({
    event: 'permission_request',
    session_id: 'chat-1',
    data: `Bash: ${command}`,
    permission: { id, tool: { name: 'Bash', input: { command } }, title: `Bash: ${command}`, options: ['allow_once', 'allow_always', 'deny'], expires_at: 1 },
  }) as ServiceEvent
const question = (id: string): ServiceEvent =>
  ({
    event: 'question',
    session_id: 'chat-1',
    data: 'Which colour?',
    question: { id, questions: [{ question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }], multi_select: false }], expires_at: 1 },
  }) as ServiceEvent
const resolved = (id: string, fields: Record<string, unknown>): ServiceEvent =>
  ({ event: 'permission_resolved', session_id: 'chat-1', data: '', permission_id: id, decision: 'allow_once', source: 'client', ...fields }) as ServiceEvent

/** A ChatSteering whose runner answers each reply with `refuse()` (a ServiceError to throw) or success. */
function steering(refuse: () => ServiceError | undefined = () => undefined) {
  const said: string[] = []
  const replies: Command[] = []
  const desk = new ChatSteering({
    runners: {
      async send(command: Command) {
        replies.push(command)
        const error = refuse()
        if (error) throw error
        return { resolved: true }
      },
    } as never,
    say: (_session, text) => void said.push(text),
    log: captureLog().log,
  })
  return { desk, said, replies }
}

describe('chat steering - one conversation', () => {
  it('chat steering - a permission request is shown numbered; "1" goes to the runner as the person’s reply', async () => {
    const { desk, said, replies } = steering()
    desk.onEvent(session, asks('per_1'))
    expect(said).toEqual(['The agent wants to run Bash: touch canary. Reply 1 to allow once, 2 to allow for this session, 3 to deny.'])
    expect(desk.waiting('chat-1')).toBe(true)
    await desk.answer(session, '1')
    expect(replies).toEqual([{ type: 'reply', session_id: 'chat-1', reply: { kind: 'permission', id: 'per_1', decision: 'allow_once' }, by: 'chat:u1' }])
    expect(desk.waiting('chat-1')).toBe(false)
    // The runner tells every client, this conversation too: its own answer is not told again.
    desk.onEvent(session, resolved('per_1', { by: 'chat:u1' }))
    expect(said.length).toBe(1)
  })

  it('chat steering - a text that answers nothing gets the hint; the request stays open and nothing reaches the runner', async () => {
    const { desk, said, replies } = steering()
    desk.onEvent(session, asks('per_1'))
    await desk.answer(session, 'please also list the files')
    expect(said[1]).toMatch(/^The agent is waiting for your answer about Bash: touch canary\. Reply 1/)
    expect(replies).toEqual([])
    expect(desk.waiting('chat-1')).toBe(true)
  })

  it.each([
    [{ by: 'websocket' }, 'Allowed from another client.'],
    [{ decision: 'deny', source: 'timeout' }, 'No answer in time: denied.'],
  ])('chat steering - settled elsewhere (%j): told, and no longer open', (fields, text) => {
    const { desk, said } = steering()
    desk.onEvent(session, asks('per_1'))
    desk.onEvent(session, resolved('per_1', fields))
    expect(said.slice(1)).toEqual([text])
    expect(desk.waiting('chat-1')).toBe(false)
  })

  it('chat steering - a rule’s decision, never asked here, is not told', () => {
    const { desk, said } = steering()
    desk.onEvent(session, resolved('per_rule', { source: 'rule', rule: 'Bash(ls*)' }))
    expect(said).toEqual([])
  })

  it.each([
    ['ALREADY_ANSWERED', 'Too late: this request was settled already (it timed out or another client answered it).', false],
    ['PERMISSION_NOT_FOUND', 'This request is no longer open.', false],
    ['RUNNER_UNAVAILABLE', 'Your answer could not be delivered (RUNNER_UNAVAILABLE): no runner. Please reply again.', true],
  ] as const)('chat steering - the runner refuses with %s: the person is told; open again only when nothing settled it', async (code, text, open) => {
    const { desk, said } = steering(() => new ServiceError(code, 'no runner'))
    desk.onEvent(session, asks('per_1'))
    await desk.answer(session, '3')
    expect(said.slice(1)).toEqual([text])
    expect(desk.waiting('chat-1')).toBe(open)
  })

  it('chat steering - a failed send whose answer was settled meanwhile is not opened again', async () => {
    const { desk, said } = steering(() => {
      // The runner took the answer and told every client, but its reply was lost.
      desk.onEvent(session, resolved('per_1', { by: 'chat:u1' }))
      return new ServiceError('RUNNER_UNAVAILABLE', 'no runner')
    })
    desk.onEvent(session, asks('per_1'))
    await desk.answer(session, '1')
    expect(said.length).toBe(1)
    expect(desk.waiting('chat-1')).toBe(false)
  })

  it('chat steering - a failed send delivered after all: its late resolution is not told as another client’s', async () => {
    const { desk, said } = steering(() => new ServiceError('RUNNER_UNAVAILABLE', 'no runner'))
    desk.onEvent(session, asks('per_1'))
    await desk.answer(session, '1')
    expect(desk.waiting('chat-1')).toBe(true)
    desk.onEvent(session, resolved('per_1', { by: 'chat:u1' }))
    expect(said.length).toBe(2)
    expect(desk.waiting('chat-1')).toBe(false)
  })

  it('chat steering - two requests: the second is shown once the first is answered, and the next text answers it', async () => {
    const { desk, said, replies } = steering()
    desk.onEvent(session, asks('per_1'))
    desk.onEvent(session, question('que_2'))
    expect(said.length).toBe(1)
    await desk.answer(session, 'deny: not now')
    expect(said[1]).toBe("The agent asks: Which colour?\n1. Red\n2. Blue\nReply with an option's number or name, or reject to skip.")
    await desk.answer(session, 'blue')
    expect(replies.map((command) => (command as { reply: unknown }).reply)).toEqual([
      { kind: 'permission', id: 'per_1', decision: 'deny', message: 'not now' },
      { kind: 'answer', id: 'que_2', answers: [['Blue']] },
    ])
    expect(desk.waiting('chat-1')).toBe(false)
  })

  it('chat steering - the turn’s end closes what it asked', () => {
    const { desk } = steering()
    desk.onEvent(session, asks('per_1'))
    desk.turnEnded('chat-1')
    expect(desk.waiting('chat-1')).toBe(false)
  })
})
