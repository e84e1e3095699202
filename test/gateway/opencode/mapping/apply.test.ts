import { describe, expect, it } from 'vitest'
import type { ServiceEvent } from '../../../../contract/mod.ts'
import { sequentialIds } from '../../../../gateway/opencode/ids.ts'
import { applyEvent, dropTurn, planTurn, type MapResult } from '../../../../gateway/opencode/mapping/apply.ts'
import { makePlan, newSessionView, type MapContext, type SessionView, type TurnEnd } from '../../../../gateway/opencode/mapping/state.ts'
import { OpencodeEventSchema, type OpencodeEvent } from '../../../../gateway/opencode/schemas/event.ts'
import { nativeTurn } from '../native-events.ts'

const SESSION = 'ses_test'

function context(): MapContext {
  return { id: sequentialIds(), now: () => 5, defaults: { agent: 'build', model: { providerID: 'agent-runtime', modelID: 'default' } } }
}

/** One line per OpenCode event, enough to read the sequence at a glance. */
function summarize(event: OpencodeEvent): string {
  const p = event.properties as Record<string, any>
  switch (event.type) {
    case 'message.updated': {
      const info = p.info
      if (info.role === 'user') return `message.updated user ${info.id}`
      const state = info.error ? `error ${info.error.name}` : info.time.completed !== undefined ? 'completed' : 'open'
      return `message.updated assistant ${info.id} ${state}`
    }
    case 'message.part.updated': {
      const part = p.part
      if (part.type === 'tool') return `part ${part.id} tool ${part.callID} ${part.state.status}`
      if (part.type === 'text' || part.type === 'reasoning') {
        const end = part.time === undefined ? '' : part.time.end === undefined ? ' open' : ' closed'
        return `part ${part.id} ${part.type} ${JSON.stringify(part.text)}${end}`
      }
      return `part ${part.id} ${part.type}`
    }
    case 'message.part.delta':
      return `delta ${p.partID} ${JSON.stringify(p.delta)}`
    case 'session.status':
      return `status ${p.status.type}`
    case 'session.error':
      return `session.error ${p.error.name}`
    default:
      return event.type
  }
}

interface Run {
  view: SessionView
  events: OpencodeEvent[]
  ended: TurnEnd[]
}

function feed(native: ServiceEvent[], setup?: (view: SessionView, ctx: MapContext) => MapResult[]): Run {
  const ctx = context()
  const view = newSessionView(SESSION, '/srv/sandbox')
  const results = setup?.(view, ctx) ?? []
  for (const event of native) results.push(applyEvent(view, event, ctx))
  return { view, events: results.flatMap((r) => r.events), ended: results.flatMap((r) => r.ended) }
}

const t = nativeTurn(SESSION, 'turn_1')
const u = nativeTurn(SESSION, 'turn_2')

const cases: { name: string; native: ServiceEvent[]; setup?: (view: SessionView, ctx: MapContext) => MapResult[]; expected: string[] }[] = [
  {
    name: 'an answer-only turn',
    native: [t.started('hello'), t.answer('Echo: hello'), t.completed()],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "hello"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "Echo: hello"',
      'part prt_3 text "Echo: hello" closed',
      'part prt_4 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a tool turn: one tool part from running to completed',
    native: [
      t.started('tool: echo hi'),
      t.thinking('I will use Bash.'),
      t.answer('Let me run a command.'),
      t.toolUse('toolu_1', { command: 'echo hi', description: 'Run echo hi' }),
      t.toolResult('toolu_1', 'hi'),
      t.answer('Done.', 'msg_api_2'),
      t.completed(),
    ],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "tool: echo hi"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 reasoning "" open',
      'delta prt_3 "I will use Bash."',
      'part prt_3 reasoning "I will use Bash." closed',
      'part prt_4 text "" open',
      'delta prt_4 "Let me run a command."',
      'part prt_4 text "Let me run a command." closed',
      'part prt_5 tool toolu_1 running',
      'part prt_5 tool toolu_1 completed',
      'part prt_6 text "" open',
      'delta prt_6 "Done."',
      'part prt_6 text "Done." closed',
      'part prt_7 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a streamed answer: a delta per piece, then the whole block closes the part (no delta of it)',
    native: [t.started('hello'), t.answerDelta('Echo: '), t.answerDelta('hel'), t.answerDelta('lo'), t.answer('Echo: hello'), t.completed()],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "hello"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "Echo: "',
      'delta prt_3 "hel"',
      'delta prt_3 "lo"',
      'part prt_3 text "Echo: hello" closed',
      'part prt_4 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a streamed tool turn: reasoning and text parts each get their own deltas, the next message a new part',
    native: [
      t.started('tool: echo hi'),
      t.thinkingDelta('I will '),
      t.thinkingDelta('use Bash.'),
      t.thinking('I will use Bash.'),
      t.answerDelta('Let me'),
      t.answerDelta(' run it.'),
      t.answer('Let me run it.'),
      t.toolUse('toolu_1', { command: 'echo hi' }),
      t.toolResult('toolu_1', 'hi'),
      t.answerDelta('Done.', 'msg_api_2'),
      t.answer('Done.', 'msg_api_2'),
      t.completed(),
    ],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "tool: echo hi"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 reasoning "" open',
      'delta prt_3 "I will "',
      'delta prt_3 "use Bash."',
      'part prt_3 reasoning "I will use Bash." closed',
      'part prt_4 text "" open',
      'delta prt_4 "Let me"',
      'delta prt_4 " run it."',
      'part prt_4 text "Let me run it." closed',
      'part prt_5 tool toolu_1 running',
      'part prt_5 tool toolu_1 completed',
      'part prt_6 text "" open',
      'delta prt_6 "Done."',
      'part prt_6 text "Done." closed',
      'part prt_7 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a delta that overtook its turn_started, and one after the turn ended, are dropped',
    native: [t.answerDelta('early'), t.started('hi'), t.answer('Echo: hi'), t.completed(), t.answerDelta('late')],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "hi"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "Echo: hi"',
      'part prt_3 text "Echo: hi" closed',
      'part prt_4 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a stop mid-stream closes the part with the text it has',
    native: [t.started('long'), t.answerDelta('Once upon'), t.stopped('aborted by the client')],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "long"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "Once upon"',
      'part prt_3 text "Once upon" closed',
      'message.updated assistant msg_2 error MessageAbortedError',
      'session.error MessageAbortedError',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a delta of another API message while a part is open: the open one is closed as it stands',
    native: [t.started('x'), t.answerDelta('first', 'msg_api_1'), t.answerDelta('second', 'msg_api_2'), t.answer('second', 'msg_api_2'), t.completed()],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "x"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "first"',
      'part prt_3 text "first" closed',
      'part prt_4 text "" open',
      'delta prt_4 "second"',
      'part prt_4 text "second" closed',
      'part prt_5 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a failing tool ends in the error state',
    native: [t.started('x'), t.toolUse('toolu_9', { command: 'false' }), t.toolResult('toolu_9', 'exit 1', true), t.completed()],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "x"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 tool toolu_9 running',
      'part prt_3 tool toolu_9 error',
      'part prt_4 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a stop mid-tool: the tool errors, the message is aborted',
    native: [t.started('sleep: 5'), t.toolUse('toolu_2', { command: 'sleep 5' }), t.stopped('aborted by the client')],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "sleep: 5"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 tool toolu_2 running',
      'part prt_3 tool toolu_2 error',
      'message.updated assistant msg_2 error MessageAbortedError',
      'session.error MessageAbortedError',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a failed turn carries the error',
    native: [t.started('fail'), t.answer('API Error: 500'), t.error('ENGINE_ERROR', 'the agent CLI reported a failed turn')],
    expected: [
      'message.updated user msg_1',
      'part prt_1 text "fail"',
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "API Error: 500"',
      'part prt_3 text "API Error: 500" closed',
      'message.updated assistant msg_2 error UnknownError',
      'session.error UnknownError',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a planned turn is busy at once and uses the planned message ids',
    setup: (view, ctx) => [planTurn(view, makePlan(ctx, 'turn_1', { messageID: 'msg_client' }), ctx)],
    native: [t.started('hi'), t.answer('Echo: hi'), t.completed()],
    expected: [
      'status busy',
      'message.updated user msg_client',
      'part prt_1 text "hi"',
      'message.updated assistant msg_1 open',
      'part prt_2 step-start',
      'part prt_3 text "" open',
      'delta prt_3 "Echo: hi"',
      'part prt_3 text "Echo: hi" closed',
      'part prt_4 step-finish',
      'message.updated assistant msg_1 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'two planned turns: idle only after the second ends',
    setup: (view, ctx) => [planTurn(view, makePlan(ctx, 'turn_1'), ctx), planTurn(view, makePlan(ctx, 'turn_2'), ctx)],
    native: [t.started('one'), t.completed(), u.started('two'), u.completed()],
    expected: [
      'status busy',
      'message.updated user msg_1',
      'part prt_1 text "one"',
      'message.updated assistant msg_2 open',
      'part prt_2 step-start',
      'part prt_3 step-finish',
      'message.updated assistant msg_2 completed',
      'message.updated user msg_3',
      'part prt_4 text "two"',
      'message.updated assistant msg_4 open',
      'part prt_5 step-start',
      'part prt_6 step-finish',
      'message.updated assistant msg_4 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'a queued turn dropped by a stop makes no messages',
    setup: (view, ctx) => [planTurn(view, makePlan(ctx, 'turn_2'), ctx)],
    native: [u.stopped('dropped by stop before it started')],
    expected: ['status busy', 'status idle', 'session.idle'],
  },
  {
    name: 'a turn seen from its middle starts at its first event, with no user message',
    native: [t.answer('late'), t.completed()],
    expected: [
      'status busy',
      'message.updated assistant msg_2 open',
      'part prt_1 step-start',
      'part prt_2 text "" open',
      'delta prt_2 "late"',
      'part prt_2 text "late" closed',
      'part prt_3 step-finish',
      'message.updated assistant msg_2 completed',
      'status idle',
      'session.idle',
    ],
  },
  {
    name: 'events of no turn are ignored',
    native: [
      { event: 'stopped', session_id: SESSION, seq: 1, ts: 1 },
      { event: 'error', session_id: SESSION, data: 'x', error: { code: 'BAD_REQUEST', message: 'x' } },
      { event: 'version', data: '2.1.330', engine: 'claude' },
    ],
    expected: [],
  },
  {
    name: 'an end event of a turn never seen is ignored',
    native: [t.completed()],
    expected: [],
  },
]

describe('opencode mapping - native events to OpenCode events', () => {
  it.each(cases)('$name', ({ native, setup, expected }) => {
    const { events } = feed(native, setup)
    expect(events.map(summarize)).toEqual(expected)
    // Every event is well-formed OpenCode and carries an evt_ id and the session.
    for (const event of events) {
      expect(() => OpencodeEventSchema.parse(event)).not.toThrow()
      expect(event.id).toMatch(/^evt_/)
      if (event.type !== 'server.connected' && event.type !== 'server.heartbeat') expect(event.properties.sessionID).toBe(SESSION)
    }
  })

  it('tool part - same part id and callID, input, output, title and times', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { events } = feed([
      t.started('tool: echo hi'),
      t.toolUse('toolu_1', { command: 'echo hi', description: 'Run echo hi' }),
      t.toolResult('toolu_1', 'hi'),
      t.completed(),
    ])
    const tools = events.filter((e) => e.type === 'message.part.updated' && e.properties.part.type === 'tool').map((e) => (e.properties as any).part)
    expect(tools).toEqual([
      {
        id: 'prt_3',
        sessionID: SESSION,
        messageID: 'msg_2',
        type: 'tool',
        callID: 'toolu_1',
        tool: 'Bash',
        state: { status: 'running', input: { command: 'echo hi', description: 'Run echo hi' }, title: 'Run echo hi', time: { start: 1020 } },
      },
      {
        id: 'prt_3',
        sessionID: SESSION,
        messageID: 'msg_2',
        type: 'tool',
        callID: 'toolu_1',
        tool: 'Bash',
        state: {
          status: 'completed',
          input: { command: 'echo hi', description: 'Run echo hi' },
          output: 'hi',
          title: 'Run echo hi',
          metadata: {},
          time: { start: 1020, end: 1030 },
        },
      },
    ])
  })

  it('completed - the assistant message gets tokens, cost, model and time.completed; the turn end has its parts', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { view, ended } = feed([t.started('hi'), t.answer('Echo: hi'), t.completed({ model: 'claude-opus-9' })])
    const assistant = view.messages[1]!
    expect(assistant.info).toMatchObject({
      role: 'assistant',
      parentID: 'msg_1',
      modelID: 'claude-opus-9',
      providerID: 'agent-runtime',
      agent: 'build',
      path: { cwd: '/srv/sandbox', root: '/srv/sandbox' },
      cost: 0.001,
      tokens: { total: 113, input: 24, output: 84, reasoning: 0, cache: { read: 3, write: 2 } },
      time: { created: 1010, completed: 1030 },
      finish: 'stop',
    })
    expect(assistant.parts.map((p) => p.type)).toEqual(['step-start', 'text', 'step-finish'])
    expect(ended).toEqual([{ turnId: 'turn_1', end: 'completed', message: { info: assistant.info, parts: assistant.parts } }])
  })

  it('planned turn - agent, model and system go to the user message', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { view } = feed([t.started('hi')], (v, ctx) => [
      planTurn(v, makePlan(ctx, 'turn_1', { agent: 'plan', model: { providerID: 'anthropic', modelID: 'claude-x' }, system: 'Be terse.' }), ctx),
    ])
    expect(view.messages[0]!.info).toEqual({
      id: 'msg_1',
      sessionID: SESSION,
      role: 'user',
      time: { created: 1010 },
      agent: 'plan',
      model: { providerID: 'anthropic', modelID: 'claude-x' },
      system: 'Be terse.',
    })
    expect(view.messages[1]!.info).toMatchObject({ agent: 'plan', mode: 'plan', providerID: 'anthropic', modelID: 'claude-x' })
  })

  it("turn_started of a turn started elsewhere - its instructions become the user message's system", () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { view } = feed([t.started('hi', 'From the WebSocket.')])
    expect(view.messages[0]!.info).toMatchObject({
      role: 'user',
      agent: 'build',
      model: { providerID: 'agent-runtime', modelID: 'default' },
      system: 'From the WebSocket.',
    })
  })

  it('error - the turn end and the message carry the code', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { view, ended } = feed([t.started('x'), t.error('TURN_TIMEOUT', 'too long')])
    expect(view.messages[1]!.info).toMatchObject({ error: { name: 'UnknownError', data: { message: 'too long', code: 'TURN_TIMEOUT' } } })
    expect(ended[0]).toMatchObject({ turnId: 'turn_1', end: 'error', error: { code: 'TURN_TIMEOUT', message: 'too long' } })
  })

  it('dropTurn - a planned turn whose execute failed is forgotten and the session is idle again', () => {
    const ctx = context()
    const view = newSessionView(SESSION, '/d')
    const planned = planTurn(view, makePlan(ctx, 'turn_1'), ctx)
    const dropped = dropTurn(view, 'turn_1', ctx)
    expect([...planned.events, ...dropped.events].map(summarize)).toEqual(['status busy', 'status idle', 'session.idle'])
    expect(view.turns.size).toBe(0)
    expect(view.messages).toEqual([])
  })

  it('streaming - the view holds the text so far mid-stream (GET /session/{id}/message), and the whole text after', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const ctx = context()
    const view = newSessionView(SESSION, '/d')
    for (const event of [t.started('x'), t.answerDelta('Hel'), t.answerDelta('lo')]) applyEvent(view, event, ctx)
    expect(view.messages[1]!.parts.at(-1)).toMatchObject({ type: 'text', text: 'Hello', time: { start: 1015 } })
    expect(view.messages[1]!.parts.at(-1)).not.toHaveProperty('time.end')
    applyEvent(view, t.answer('Hello!'), ctx)
    expect(view.messages[1]!.parts.map((p) => p.type)).toEqual(['step-start', 'text'])
    expect(view.messages[1]!.parts.at(-1)).toMatchObject({ type: 'text', text: 'Hello!', time: { start: 1015, end: 1020 } })
  })

  it('emitted events are snapshots: later changes of a part do not alter them', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { events } = feed([t.started('x'), t.toolUse('toolu_1', { command: 'ls' }), t.toolResult('toolu_1', 'a b')])
    const running = events.find((e) => e.type === 'message.part.updated' && e.properties.part.type === 'tool')!
    expect((running.properties as any).part.state.status).toBe('running')
  })
})

/** The array with its element reads counted in `reads.n`: how much of the view the mapper looks at. */
function counted<T>(items: T[], reads: { n: number }): T[] {
  return new Proxy(items, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.n++
      return Reflect.get(target, key, receiver)
    },
  })
}

/**
 * After `earlierTurns` finished turns and `answers` answers of a running turn,
 * one more answer: the elements of the view's arrays it read (messages and
 * every message's parts), and the bytes of the events it made (numbers
 * counted as one digit: ids and times grow longer as they count up).
 */
function costOfOneMoreAnswer(earlierTurns: number, answers: number): { reads: number; bytes: number; parts: number } {
  const ctx = context()
  const view = newSessionView(SESSION, '/d')
  for (let i = 0; i < earlierTurns; i++) {
    const old = nativeTurn(SESSION, `turn_old_${i}`)
    for (const event of [old.started('x'), old.answer('y'), old.completed()]) applyEvent(view, event, ctx)
  }
  const t = nativeTurn(SESSION, 'turn_long')
  applyEvent(view, t.started('long'), ctx)
  for (let i = 0; i < answers; i++) applyEvent(view, t.answer(`part ${i}`), ctx)
  const reads = { n: 0 }
  view.messages = counted(view.messages, reads)
  for (const message of view.messages) message.parts = counted(message.parts, reads)
  reads.n = 0
  const { events } = applyEvent(view, t.answer('one more'), ctx)
  const long = view.messages.at(-1)!
  return { reads: reads.n, bytes: JSON.stringify(events).replace(/\d+/g, '0').length, parts: long.parts.length }
}

describe('opencode mapping - the work of one event does not grow with the turn or the session (issue 16)', () => {
  const base = costOfOneMoreAnswer(0, 10)
  it.each([
    { name: 'a turn of 10 answers', earlierTurns: 0, answers: 10 },
    { name: 'a turn of 5,000 answers', earlierTurns: 0, answers: 5_000 },
    { name: 'after 2,000 earlier turns', earlierTurns: 2_000, answers: 10 },
  ])('one more answer in $name reads as much of the view and makes as many bytes as in a short turn', ({ earlierTurns, answers }) => {
    const cost = costOfOneMoreAnswer(earlierTurns, answers)
    expect(cost.parts).toBe(answers + 2) // step-start, the answers, the new one: it did land in the message
    expect(cost.reads).toBe(base.reads)
    expect(cost.bytes).toBe(base.bytes)
  })

  it('a part replaced later (a tool result) takes the place of the running one, and the turn end keeps its own copy', () => {
    const t = nativeTurn(SESSION, 'turn_1')
    const { view, ended } = feed([t.started('x'), t.toolUse('toolu_1', { command: 'ls' }), t.answer('a'), t.toolResult('toolu_1', 'out'), t.completed()])
    const parts = view.messages[1]!.parts
    expect(parts.map((p) => (p.type === 'tool' ? `tool ${p.state.status}` : p.type))).toEqual(['step-start', 'tool completed', 'text', 'step-finish'])
    expect(ended[0]!.message!.parts).toEqual(parts)
    expect(ended[0]!.message!.parts).not.toBe(parts)
  })
})
