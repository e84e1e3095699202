import { describe, expect, it } from 'vitest'
import type { ServiceEvent } from '../../../../contract/mod.ts'
import { sequentialIds } from '../../../../gateway/opencode/ids.ts'
import { applyEvent } from '../../../../gateway/opencode/mapping/apply.ts'
import { newSessionView, type MapContext, type SessionView } from '../../../../gateway/opencode/mapping/state.ts'
import { OpencodeEventSchema, type OpencodeEvent } from '../../../../gateway/opencode/schemas/event.ts'
import { nativeTurn } from '../native-events.ts'

const SESSION = 'ses_steer'

function feed(native: ServiceEvent[]): { view: SessionView; events: OpencodeEvent[] } {
  const ctx: MapContext = { id: sequentialIds(), now: () => 5, defaults: { agent: 'build', model: { providerID: 'agent-runtime', modelID: 'default' } } }
  const view = newSessionView(SESSION, '/srv/sandboxes/ses_steer')
  const events = native.flatMap((event) => applyEvent(view, event, ctx).events)
  return { view, events }
}

/** The steering events only, one line each. */
function steering(events: OpencodeEvent[]): string[] {
  return events.flatMap((event) => {
    const p = event.properties as Record<string, any>
    switch (event.type) {
      case 'permission.asked':
        return [`asked ${p.id} ${p.permission} [${p.patterns}] tool=${p.tool ? `${p.tool.messageID}/${p.tool.callID}` : '-'}`]
      case 'permission.replied':
        return [`replied ${p.requestID} ${p.reply}`]
      case 'question.asked':
        return [`question ${p.id} ${p.questions.map((q: any) => q.question)} tool=${p.tool ? `${p.tool.messageID}/${p.tool.callID}` : '-'}`]
      case 'question.replied':
        return [`answered ${p.requestID} ${JSON.stringify(p.answers)}`]
      case 'question.rejected':
        return [`rejected ${p.requestID}`]
      default:
        return []
    }
  })
}

const t = nativeTurn(SESSION, 'turn_1')
const u = nativeTurn(SESSION, 'turn_2')

describe('opencode steering mapping - native steering events in, OpenCode permission and question events out', () => {
  it.each<{ name: string; native: ServiceEvent[]; expected: string[]; open?: { permissions: string[]; questions: string[] } }>([
    {
      name: 'a request while the call runs: asked with the turn’s assistant message and the call; allowed once',
      native: [
        t.started('run: touch canary'),
        t.toolUse('toolu_1', { command: 'touch canary' }),
        t.permission('per_1', 'toolu_1', 'touch canary'),
        t.resolved('per_1', 'allow_once'),
        t.toolResult('toolu_1', ''),
        t.completed(),
      ],
      expected: ['asked per_1 bash [touch canary] tool=msg_2/toolu_1', 'replied per_1 once'],
    },
    {
      name: 'allow always and deny: always, reject',
      native: [
        t.started('p'),
        t.permission('per_1', 'toolu_1', 'a'),
        t.resolved('per_1', 'allow_always'),
        t.permission('per_2', 'toolu_2', 'b'),
        t.resolved('per_2', 'deny', 'timeout'),
        t.completed(),
      ],
      expected: ['asked per_1 bash [a] tool=msg_2/toolu_1', 'replied per_1 always', 'asked per_2 bash [b] tool=msg_2/toolu_2', 'replied per_2 reject'],
    },
    {
      name: 'still waiting: open in the view',
      native: [t.started('p'), t.permission('per_1', 'toolu_1', 'a'), t.question('que_1', 'Which?', ['A', 'B'])],
      expected: ['asked per_1 bash [a] tool=msg_2/toolu_1', 'question que_1 Which? tool=-'],
      open: { permissions: ['per_1'], questions: ['que_1'] },
    },
    {
      name: 'a rule decided: nothing was asked, nothing is told',
      native: [t.started('p'), t.resolved('per_rule', 'allow_once', 'rule'), t.completed()],
      expected: [],
    },
    {
      name: 'the same request twice (a replay overlapping live events): asked once, replied once',
      native: [
        t.started('p'),
        t.permission('per_1', 'toolu_1', 'a'),
        t.permission('per_1', 'toolu_1', 'a'),
        t.resolved('per_1', 'deny'),
        t.resolved('per_1', 'deny'),
      ],
      expected: ['asked per_1 bash [a] tool=msg_2/toolu_1', 'replied per_1 reject'],
    },
    {
      name: 'a call without its id, or a request with no turn: no tool',
      native: [t.started('p'), t.permission('per_1', undefined, 'a'), { ...t.permission('per_2', 'toolu_2', 'b'), turn_id: undefined }],
      expected: ['asked per_1 bash [a] tool=-', 'asked per_2 bash [b] tool=-'],
      open: { permissions: ['per_1', 'per_2'], questions: [] },
    },
    {
      name: 'a question while AskUserQuestion runs: its call is the tool; answered',
      native: [
        t.started('ask: Which?'),
        t.toolUse('toolu_q', { questions: [] }, 'AskUserQuestion'),
        t.question('que_1', 'Which?', ['A', 'B']),
        t.answered('que_1', [['B']]),
        t.completed(),
      ],
      expected: ['question que_1 Which? tool=msg_2/toolu_q', 'answered que_1 [["B"]]'],
    },
    {
      name: 'a question rejected, or unanswered in time: rejected',
      native: [
        t.started('p'),
        t.question('que_1', 'A?', ['x']),
        t.answered('que_1'),
        t.question('que_2', 'B?', ['y']),
        t.answered('que_2', undefined, 'timeout'),
      ],
      expected: ['question que_1 A? tool=-', 'rejected que_1', 'question que_2 B? tool=-', 'rejected que_2'],
    },
    {
      name: 'the turn ends with requests open (its runner lost): rejected, as OpenCode settles a cancelled session',
      native: [
        t.started('p'),
        t.permission('per_1', 'toolu_1', 'a'),
        t.question('que_1', 'A?', ['x']),
        t.error('ENGINE_EXITED', 'gone'),
        t.resolved('per_1', 'deny', 'turn_ended'),
      ],
      expected: ['asked per_1 bash [a] tool=msg_2/toolu_1', 'question que_1 A? tool=-', 'replied per_1 reject', 'rejected que_1'],
      open: { permissions: [], questions: [] },
    },
    {
      name: 'a request of the next turn outlives the end of the one before',
      native: [t.started('p'), u.started('q'), u.permission('per_2', 'toolu_2', 'b'), t.completed()],
      expected: ['asked per_2 bash [b] tool=msg_4/toolu_2'],
      open: { permissions: ['per_2'], questions: [] },
    },
  ])('steering - $name', ({ native, expected, open }) => {
    const { view, events } = feed(native)
    expect(steering(events)).toEqual(expected)
    for (const event of events) expect(() => OpencodeEventSchema.parse(event), event.type).not.toThrow()
    if (open) {
      expect([...view.steering.permissions.keys()]).toEqual(open.permissions)
      expect([...view.steering.questions.keys()]).toEqual(open.questions)
    }
  })

  it('steering - permission.asked is sent before the session goes idle, replied before it too', () => {
    const { events } = feed([t.started('p'), t.permission('per_1', 'toolu_1', 'a'), t.stopped('stop')])
    const types = events.map((event) => event.type)
    expect(types.indexOf('permission.asked')).toBeLessThan(types.indexOf('permission.replied'))
    expect(types.indexOf('permission.replied')).toBeLessThan(types.indexOf('session.idle'))
  })
})
