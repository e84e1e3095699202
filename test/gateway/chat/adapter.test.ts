import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MemoryBus } from '../../../bus/mod.ts'
import { Command, emptyStats, errorReply, okReply, ServiceError, subjects, type CommandOf } from '../../../contract/mod.ts'
import { ChatAdapter, replyText, type RobotSender } from '../../../gateway/chat/adapter.ts'
import type { ChatSettings } from '../../../gateway/chat/config.ts'
import { ChatError } from '../../../gateway/chat/errors.ts'
import { ChatSessions } from '../../../gateway/chat/sessions.ts'
import type { ChatMessage, SendBody } from '../../../gateway/chat/wire.ts'
import { RunnerClient } from '../../../gateway/runner-client.ts'
import { SessionHub } from '../../../gateway/session-hub.ts'
import type { TurnOutcome } from '../../../gateway/turns/follow.ts'
import { captureLog, until } from '../../fixtures/chat.ts'
import { MemoryRegistry } from '../../../state/mod.ts'

const PREFIX = 'test'
const SETTINGS: ChatSettings = {
  enabled: true,
  app_key: 'k',
  app_secret: 's',
  callback_token: 'cb',
  api_url: 'http://unused.test',
  max_message_length: 40,
  system_prompt: 'Be brief.',
  message_format: 'text',
  markdown_title: 'Agent reply',
  timestamp_window: 300_000,
  sweep_interval: 300_000,
  idle_timeout: 1_800_000,
  send_attempts: 1,
  retry_delay: 1,
  turn_timeout: 10_000,
  request_timeout: 1000,
  tenant: 'default',
}

/** A runner on the bus that answers every execute with `answer(prompt)`, optionally held until released. */
function fakeRunner(bus: MemoryBus, answer: (prompt: string) => { text: string; end?: 'completed' | 'error' }) {
  const executes: CommandOf<'execute'>[] = []
  let gate: Promise<void> | undefined
  const s = subjects(PREFIX)
  bus.subscribe(s.place, (msg) => {
    const command = Command.parse(JSON.parse(msg.data))
    if (command.type !== 'execute') return msg.respond(okReply('close', { closed: true }))
    executes.push(command)
    msg.respond(okReply('execute', { turn_id: command.turn_id, queued: 0, after_seq: 0 }))
    void (async () => {
      if (gate) await gate
      const { text, end = 'completed' } = answer(command.prompt)
      const base = { session_id: command.session_id, turn_id: command.turn_id }
      bus.publish(s.events(command.session_id), JSON.stringify({ ...base, event: 'answer', data: text }))
      const last =
        end === 'completed'
          ? { ...base, event: 'completed', stats: emptyStats(), turn_stats: emptyStats() }
          : { ...base, event: 'error', data: 'failed', error: { code: 'ENGINE_ERROR', message: 'the model failed' } }
      bus.publish(s.events(command.session_id), JSON.stringify(last))
    })()
  })
  return {
    executes,
    hold() {
      const released = Promise.withResolvers<void>()
      gate = released.promise
      return () => {
        gate = undefined
        released.resolve()
      }
    },
  }
}

/** A robot sender that records bodies; `failAt` makes that send (1-based) fail. */
function recordingSender(failAt?: number): RobotSender & { sent: { robotCode: string; body: SendBody }[] } {
  const sent: { robotCode: string; body: SendBody }[] = []
  let calls = 0
  return {
    sent,
    async send(robotCode, body) {
      if (++calls === failAt) throw new ChatError('CHAT_SEND_FAILED', 'batchSend answered 503', { status: 503, retryable: true })
      sent.push({ robotCode, body })
    },
  }
}

function message(content: string, user = 'u1', robotCode: string | null = 'robot-1'): ChatMessage {
  return { user_id: user, content, metadata: { conversation_id: 'c1', ...(robotCode !== null && { robot_code: robotCode }) } }
}

let bus: MemoryBus
beforeEach(() => {
  bus = new MemoryBus()
})
afterEach(async () => {
  await bus.close()
})

function adapter(robot: RobotSender, settings: Partial<ChatSettings> = {}) {
  const { log, lines } = captureLog()
  const runners = new RunnerClient(bus, PREFIX, 2000, new MemoryRegistry())
  const sessions = new ChatSessions({ idleMs: 1000, close: async () => {}, log })
  const chat = new ChatAdapter({ settings: { ...SETTINGS, ...settings }, turns: { runners, hub: new SessionHub(bus, PREFIX, log) }, sessions, robot, log })
  return { chat, sessions, lines }
}

const texts = (sent: { body: SendBody }[]) => sent.map(({ body }) => (body.msgtype === 'text' ? body.text.content : body.markdown.text))

describe('chat adapter', () => {
  it('adapter - one message is one turn with the system prompt; the answer goes back to the sender', async () => {
    const runner = fakeRunner(bus, (prompt) => ({ text: `Echo: ${prompt}` }))
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot)
    const session = chat.receive(message('  hello  '))
    await sessions.idle()
    expect(runner.executes).toMatchObject([{ session_id: session.session_id, prompt: 'hello', instructions: 'Be brief.' }])
    expect(robot.sent).toEqual([{ robotCode: 'robot-1', body: { msgtype: 'text', text: { content: 'Echo: hello' }, userIds: ['u1'] } }])
    expect(chat.counters).toMatchObject({ messages: 1, turns: 1, parts_sent: 1, parts_failed: 0, replies_failed: 0 })
  })

  it('adapter - a long answer goes out as numbered parts, in order', async () => {
    fakeRunner(bus, () => ({ text: ['alpha beta', 'gamma delta', 'epsilon', 'zeta eta theta iota kappa'].join('\n') }))
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot)
    chat.receive(message('go'))
    await sessions.idle()
    expect(texts(robot.sent)).toEqual(['[1/2] alpha beta\ngamma delta\nepsilon', '[2/2] zeta eta theta iota kappa'])
  })

  it('adapter - markdown replies put the prefix on its own line', async () => {
    fakeRunner(bus, () => ({ text: '# Title\n' + 'x'.repeat(50) }))
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot, { message_format: 'markdown', markdown_title: 'Bot' })
    chat.receive(message('go'))
    await sessions.idle()
    expect(robot.sent[0]!.body).toEqual({ msgtype: 'markdown', markdown: { title: 'Bot', text: '[1/3]\n# Title' }, userIds: ['u1'] })
    expect(robot.sent).toHaveLength(3)
  })

  it('adapter - a part that cannot be sent is logged and counted, and the rest is not sent out of order', async () => {
    fakeRunner(bus, () => ({ text: 'y'.repeat(100) }))
    const robot = recordingSender(2)
    const { chat, sessions, lines } = adapter(robot)
    const session = chat.receive(message('go'))
    await sessions.idle()
    expect(texts(robot.sent)).toEqual([`[1/3] ${'y'.repeat(34)}`])
    expect(chat.counters).toMatchObject({ parts_sent: 1, parts_failed: 1, replies_failed: 1 })
    expect(lines.find((l) => l.msg === 'chat reply not delivered')).toMatchObject({
      level: 'error',
      session_id: session.session_id,
      code: 'CHAT_SEND_FAILED',
      status: 503,
      part: 2,
      parts: 3,
      parts_unsent: 2,
    })
  })

  it('adapter - a missing robot_code is an error logged with the session; no turn, no request', async () => {
    const runner = fakeRunner(bus, () => ({ text: 'unused' }))
    const robot = recordingSender()
    const { chat, sessions, lines } = adapter(robot)
    const session = chat.receive(message('hello', 'u1', null))
    await sessions.idle()
    expect(runner.executes).toEqual([])
    expect(robot.sent).toEqual([])
    expect(chat.counters.replies_failed).toBe(1)
    expect(lines.find((l) => l.code === 'CHAT_ROBOT_CODE_MISSING')).toMatchObject({ level: 'error', session_id: session.session_id, key: 'c1:u1' })
  })

  it('adapter - a failed turn is answered with what went wrong', async () => {
    fakeRunner(bus, () => ({ text: '', end: 'error' }))
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot, { max_message_length: 5000 })
    chat.receive(message('go'))
    await sessions.idle()
    expect(texts(robot.sent)).toEqual(['The agent failed (ENGINE_ERROR): the model failed'])
  })

  it('adapter - no runner on the bus: the sender is told to try later', async () => {
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot, { max_message_length: 5000 })
    chat.receive(message('go'))
    await sessions.idle()
    expect(texts(robot.sent)[0]).toMatch(/^The agent could not answer this message \(RUNNER_UNAVAILABLE\)/)
  })

  it('adapter - a turn that never ends is answered at chat.turn_timeout and the next message goes ahead', async () => {
    const runner = fakeRunner(bus, (prompt) => ({ text: `re ${prompt}` }))
    const release = runner.hold()
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot, { turn_timeout: 50, max_message_length: 5000 })
    chat.receive(message('lost'))
    chat.receive(message('next'))
    await until('both turns to start', () => runner.executes.length === 2)
    expect(texts(robot.sent)).toEqual([expect.stringMatching(/^The agent could not answer this message \(TURN_TIMEOUT\)/)])
    release()
    await sessions.idle()
    expect(texts(robot.sent)[1]).toBe('re next')
  })

  it('adapter - the messages of one sender are answered in order, one turn at a time', async () => {
    const runner = fakeRunner(bus, (prompt) => ({ text: `re ${prompt}` }))
    const release = runner.hold()
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot)
    for (const text of ['one', 'two', 'three']) chat.receive(message(text))
    // Another sender's message, received after the second: once its turn started, the second's would have too had it not waited.
    chat.receive(message('other', 'u2'))
    await until("the first turn and the other sender's", () => ['one', 'other'].every((prompt) => runner.executes.some((c) => c.prompt === prompt)))
    const ours = () => runner.executes.filter((c) => c.prompt !== 'other')
    // The second turn is not even started while the first runs.
    expect(ours().map((c) => c.prompt)).toEqual(['one'])
    release()
    await sessions.idle()
    expect(ours().map((c) => c.prompt)).toEqual(['one', 'two', 'three'])
    expect(new Set(ours().map((c) => c.session_id)).size).toBe(1)
    expect(texts(robot.sent).filter((text) => text !== 're other')).toEqual(['re one', 're two', 're three'])
  })

  it('adapter - different senders get separate sessions and run side by side', async () => {
    const runner = fakeRunner(bus, (prompt) => ({ text: `re ${prompt}` }))
    const release = runner.hold()
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot)
    chat.receive(message('from a', 'a'))
    chat.receive(message('from b', 'b'))
    // Both turns start while the first is held: neither waits for the other.
    await until('both turns', () => runner.executes.length === 2)
    expect(runner.executes.map((c) => c.prompt).sort()).toEqual(['from a', 'from b'])
    expect(new Set(runner.executes.map((c) => c.session_id)).size).toBe(2)
    release()
    await sessions.idle()
    expect(robot.sent.map((s) => (s.body as { userIds: string[] }).userIds[0]).sort()).toEqual(['a', 'b'])
  })

  const outcome = (end: TurnOutcome['end'], answer: string, error?: ServiceError): TurnOutcome => ({
    session_id: 's',
    turn_id: 't',
    answer,
    end,
    ...(error && { error }),
  })
  it.each([
    { name: 'completed', outcome: outcome('completed', 'the answer'), text: 'the answer' },
    { name: 'completed, empty', outcome: outcome('completed', '  '), text: '(The agent finished without an answer.)' },
    { name: 'stopped', outcome: outcome('stopped', ''), text: '(The agent was stopped.)' },
    { name: 'stopped with partial answer', outcome: outcome('stopped', 'half'), text: 'half\n\n(The agent was stopped.)' },
    { name: 'error', outcome: outcome('error', '', new ServiceError('TURN_TIMEOUT', 'too slow')), text: 'The agent failed (TURN_TIMEOUT): too slow' },
    {
      name: 'error with partial answer',
      outcome: outcome('error', 'half', new ServiceError('ENGINE_EXITED', 'gone')),
      text: 'half\n\nThe agent failed (ENGINE_EXITED): gone',
    },
    {
      name: 'completed, cut',
      outcome: { ...outcome('completed', 'long '), truncated: true as const },
      text: 'long\n\n(The answer was longer than this and was cut.)',
    },
  ])('adapter - reply text of a turn: $name', ({ outcome, text }) => {
    expect(replyText(outcome)).toBe(text)
  })
})

/**
 * A runner on the bus whose every turn asks permission to run the prompt as a
 * command, then answers with the person's decision; a refused `reply` when told.
 */
function askingRunner(bus: MemoryBus) {
  const executes: CommandOf<'execute'>[] = []
  const replies: CommandOf<'reply'>[] = []
  const waiting = new Map<string, CommandOf<'execute'>>()
  const s = subjects(PREFIX)
  bus.subscribe(s.place, (msg) => {
    const command = Command.parse(JSON.parse(msg.data))
    const publish = (turn: CommandOf<'execute'>, event: Record<string, unknown>) =>
      bus.publish(s.events(turn.session_id), JSON.stringify({ session_id: turn.session_id, turn_id: turn.turn_id, ...event }))
    if (command.type === 'execute') {
      executes.push(command)
      msg.respond(okReply('execute', { turn_id: command.turn_id, queued: 0, after_seq: 0 }))
      const id = `per_${executes.length}`
      waiting.set(id, command)
      const title = `Bash: ${command.prompt}`
      publish(command, {
        event: 'permission_request',
        data: title,
        permission: {
          id,
          tool: { name: 'Bash', input: { command: command.prompt } },
          title,
          options: ['allow_once', 'allow_always', 'deny'],
          expires_at: Date.now() + 60_000,
        },
      })
      return
    }
    if (command.type !== 'reply' || command.reply.kind !== 'permission') return msg.respond(okReply('close', { closed: true }))
    replies.push(command)
    const turn = waiting.get(command.reply.id)
    if (!turn) return msg.respond(errorReply({ code: 'PERMISSION_NOT_FOUND', message: `no ${command.reply.id}` }))
    waiting.delete(command.reply.id)
    msg.respond(okReply('reply', { resolved: true }))
    const { decision } = command.reply
    publish(turn, {
      event: 'permission_resolved',
      data: decision,
      permission_id: command.reply.id,
      decision,
      source: 'client',
      ...(command.by && { by: command.by }),
    })
    publish(turn, { event: 'answer', data: decision === 'deny' ? `did not run ${turn.prompt}` : `ran ${turn.prompt}` })
    publish(turn, { event: 'completed', stats: emptyStats(), turn_stats: emptyStats() })
  })
  return { executes, replies }
}

describe('chat adapter - steering', () => {
  const ASKED = 'The agent wants to run Bash: touch canary. Reply 1 to allow once, 2 to allow for this session, 3 to deny.'
  /** u1 asks the agent to `touch canary`; resolves once the numbered request reached u1. */
  async function asked() {
    const runner = askingRunner(bus)
    const robot = recordingSender()
    const { chat, sessions } = adapter(robot, { max_message_length: 5000 })
    const session = chat.receive(message('touch canary'))
    await until('the numbered request', () => robot.sent.length === 1)
    return { runner, robot, chat, sessions, session }
  }

  it('adapter steering - the request arrives numbered; the next text answers it instead of queueing behind the waiting turn', async () => {
    const { runner, robot, chat, sessions, session } = await asked()
    expect(texts(robot.sent)).toEqual([ASKED])
    chat.receive(message('1'))
    await sessions.idle()
    expect(runner.executes.map((c) => c.prompt)).toEqual(['touch canary'])
    expect(runner.replies).toMatchObject([
      { session_id: session.session_id, reply: { kind: 'permission', id: 'per_1', decision: 'allow_once' }, by: 'chat:u1' },
    ])
    expect(texts(robot.sent)).toEqual([ASKED, 'ran touch canary'])
    expect(chat.counters).toMatchObject({ messages: 2, turns: 1, steering: 1 })
  })

  it('adapter steering - free text while a request waits gets the hint and is no prompt; "3" denies', async () => {
    const { runner, robot, chat, sessions } = await asked()
    chat.receive(message('what are you doing?'))
    await until('the hint', () => robot.sent.length === 2)
    expect(texts(robot.sent)[1]).toMatch(/^The agent is waiting for your answer about Bash: touch canary\. Reply 1 to allow once/)
    chat.receive(message('3'))
    await sessions.idle()
    expect(runner.executes.map((c) => c.prompt)).toEqual(['touch canary'])
    expect(runner.replies.map((c) => c.reply)).toEqual([{ kind: 'permission', id: 'per_1', decision: 'deny' }])
    expect(texts(robot.sent)[2]).toBe('did not run touch canary')
  })

  it('adapter steering - another person in the same group conversation cannot answer: their text is a turn of their own session', async () => {
    const { runner, robot, chat, sessions, session: ours } = await asked()
    const theirs = chat.receive(message('1', 'u2'))
    await until("the other person's own request", () => robot.sent.length === 2)
    expect(theirs.session_id).not.toBe(ours.session_id)
    expect(runner.executes.map((c) => [c.session_id, c.prompt])).toEqual([
      [ours.session_id, 'touch canary'],
      [theirs.session_id, '1'],
    ])
    expect(runner.replies).toEqual([])
    expect(robot.sent.map((m) => (m.body as { userIds: string[] }).userIds[0])).toEqual(['u1', 'u2'])
    chat.receive(message('deny', 'u2'))
    chat.receive(message('allow'))
    await sessions.idle()
    expect(runner.replies.map((c) => [c.session_id, c.reply.id, c.by])).toEqual([
      [theirs.session_id, 'per_2', 'chat:u2'],
      [ours.session_id, 'per_1', 'chat:u1'],
    ])
  })
})
