import { describe, expect, it } from 'vitest'
import type { EventOf } from '../../../../contract/mod.ts'
import { hintText, replyErrorText, requestText, resolvedText } from '../../../../gateway/chat/steering/messages.ts'
import type { OpenRequest } from '../../../../gateway/chat/steering/open-request.ts'
import { SIZE_AND_SIDES as two, TOUCH_CANARY as permission } from './requests.ts'

const colour: OpenRequest = {
  kind: 'question',
  request: {
    id: 'que_1',
    questions: [{ question: 'Which colour?', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue' }], multi_select: false }],
    expires_at: 1,
  },
}

describe('chat steering - messages', () => {
  it.each([
    [permission, 'The agent wants to run Bash: touch canary. Reply 1 to allow once, 2 to allow for this session, 3 to deny.'],
    [
      { kind: 'permission', request: { ...permission.request, title: 'WebSearch', options: ['allow_once', 'deny'] } },
      'The agent wants to run WebSearch. Reply 1 to allow once, 2 to deny.',
    ],
    [colour, "The agent asks: Which colour?\n1. Red (warm)\n2. Blue\nReply with an option's number or name, or reject to skip."],
    [
      two,
      "The agent asks 2 questions:\n\nQ1. Size?\n1. S\n2. L\n\nQ2. Sides? (several allowed)\n1. Fries\n2. Salad\n\nReply with one answer per line (or separated by ;), in order: an option's number or name (several: separated by commas or spaces); or reject to skip.",
    ],
  ] as [OpenRequest, string][])('the numbered request %#', (open, text) => {
    expect(requestText(open)).toBe(text)
  })

  it.each([
    [permission, 'The agent is waiting for your answer about Bash: touch canary. Reply 1 to allow once, 2 to allow for this session, 3 to deny.'],
    [colour, "The agent is waiting for your answer to its question. Reply with an option's number or name, or reject to skip."],
  ] as [OpenRequest, string][])('the hint %#', (open, text) => {
    expect(hintText(open)).toBe(text)
  })

  const permissionResolved = (fields: Partial<EventOf<'permission_resolved'>>): EventOf<'permission_resolved'> =>
    ({ event: 'permission_resolved', data: '', permission_id: 'per_1', decision: 'allow_once', source: 'client', ...fields }) as EventOf<'permission_resolved'>
  const questionResolved = (fields: Partial<EventOf<'question_resolved'>>): EventOf<'question_resolved'> =>
    ({ event: 'question_resolved', data: '', question_id: 'que_1', source: 'client', ...fields }) as EventOf<'question_resolved'>

  it.each([
    [permissionResolved({ by: 'websocket' }), 'Allowed from another client.'],
    [permissionResolved({ decision: 'allow_always' }), 'Allowed for this session from another client.'],
    [permissionResolved({ decision: 'deny' }), 'Denied from another client.'],
    [permissionResolved({ decision: 'deny', source: 'timeout' }), 'No answer in time: denied.'],
    [permissionResolved({ decision: 'deny', source: 'turn_ended' }), 'The agent stopped waiting (its turn ended): denied.'],
    [permissionResolved({ source: 'rule', rule: 'Bash(git status*)' }), undefined],
    [questionResolved({ answers: [['Blue']] }), 'Answered from another client: Blue.'],
    [questionResolved({ answers: [['L'], ['Fries', 'Salad']] }), 'Answered from another client: L; Fries, Salad.'],
    [questionResolved({}), 'Skipped from another client.'],
    [questionResolved({ source: 'timeout' }), 'No answer in time: the question was skipped.'],
    [questionResolved({ source: 'turn_ended' }), 'The agent stopped waiting (its turn ended): the question was skipped.'],
  ])('settled elsewhere %#', (event, text) => {
    expect(resolvedText(event)).toBe(text)
  })

  it.each([
    [
      { code: 'ALREADY_ANSWERED', message: 'request per_1 was settled already (it timed out)' },
      'Too late: this request was settled already (it timed out or another client answered it).',
    ],
    [{ code: 'PERMISSION_NOT_FOUND', message: 'no permission request' }, 'This request is no longer open.'],
    [{ code: 'NO_RUNNER', message: 'no runner answered' }, 'Your answer could not be delivered (NO_RUNNER): no runner answered. Please reply again.'],
  ])('a refused reply %#', (error, text) => {
    expect(replyErrorText(error)).toBe(text)
  })
})
