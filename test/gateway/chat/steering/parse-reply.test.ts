import { describe, expect, it } from 'vitest'
import { hintText } from '../../../../gateway/chat/steering/messages.ts'
import type { OpenRequest } from '../../../../gateway/chat/steering/open-request.ts'
import { SIZE_AND_SIDES as two, TOUCH_CANARY as permission } from './requests.ts'
import { parseReply } from '../../../../gateway/chat/steering/parse-reply.ts'

const onceOrDeny: OpenRequest = { kind: 'permission', request: { ...permission.request, options: ['allow_once', 'deny'] } }
const colour: OpenRequest = {
  kind: 'question',
  request: {
    id: 'que_1',
    questions: [{ question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Light blue' }, { label: 'Skip' }], multi_select: false }],
    expires_at: 1,
  },
}
const toppings: OpenRequest = {
  kind: 'question',
  request: {
    id: 'que_2',
    questions: [{ question: 'Toppings?', options: [{ label: 'Ham' }, { label: 'Olives' }, { label: 'Extra cheese' }], multi_select: true }],
    expires_at: 1,
  },
}

describe('chat steering - parse a reply', () => {
  it.each([
    ['1', permission, { kind: 'permission', id: 'per_1', decision: 'allow_once' }],
    ['2', permission, { kind: 'permission', id: 'per_1', decision: 'allow_always' }],
    ['3', permission, { kind: 'permission', id: 'per_1', decision: 'deny' }],
    [' Allow ', permission, { kind: 'permission', id: 'per_1', decision: 'allow_once' }],
    ['yes!', permission, { kind: 'permission', id: 'per_1', decision: 'allow_once' }],
    ['always', permission, { kind: 'permission', id: 'per_1', decision: 'allow_always' }],
    ['allow   always.', permission, { kind: 'permission', id: 'per_1', decision: 'allow_always' }],
    ['deny', permission, { kind: 'permission', id: 'per_1', decision: 'deny' }],
    ['No', permission, { kind: 'permission', id: 'per_1', decision: 'deny' }],
    ['deny: not that file', permission, { kind: 'permission', id: 'per_1', decision: 'deny', message: 'not that file' }],
    ['3: use /tmp: instead', permission, { kind: 'permission', id: 'per_1', decision: 'deny', message: 'use /tmp: instead' }],
    ['deny:', permission, { kind: 'permission', id: 'per_1', decision: 'deny' }],
    // Numbers follow the options offered.
    ['2', onceOrDeny, { kind: 'permission', id: 'per_1', decision: 'deny' }],
    ['1', colour, { kind: 'answer', id: 'que_1', answers: [['Red']] }],
    ['light BLUE', colour, { kind: 'answer', id: 'que_1', answers: [['Light blue']] }],
    // A label wins over the reject word it spells.
    ['skip', colour, { kind: 'answer', id: 'que_1', answers: [['Skip']] }],
    ['reject', colour, { kind: 'reject', id: 'que_1' }],
    ['Reject: ask me later', colour, { kind: 'reject', id: 'que_1', message: 'ask me later' }],
    ['1, 3', toppings, { kind: 'answer', id: 'que_2', answers: [['Ham', 'Extra cheese']] }],
    ['1 2', toppings, { kind: 'answer', id: 'que_2', answers: [['Ham', 'Olives']] }],
    ['olives, extra cheese', toppings, { kind: 'answer', id: 'que_2', answers: [['Olives', 'Extra cheese']] }],
    ['2,2', toppings, { kind: 'answer', id: 'que_2', answers: [['Olives']] }],
    ['skip', toppings, { kind: 'reject', id: 'que_2' }],
    ['L\n1, 2', two, { kind: 'answer', id: 'que_3', answers: [['L'], ['Fries', 'Salad']] }],
    ['1; salad', two, { kind: 'answer', id: 'que_3', answers: [['S'], ['Salad']] }],
  ] as const)('%j answers %#', (text, open, reply) => {
    expect(parseReply(text, open)).toEqual({ reply })
  })

  it.each([
    ['touch it anyway', permission],
    ['', permission],
    ['4', permission],
    ['0', permission],
    ['always', onceOrDeny],
    ['maybe: later', permission],
    ['Green', colour],
    ['1, 2', colour],
    ['4', toppings],
    ['1, ham, 9', toppings],
    ['S', two],
    ['S\nFries\nSalad', two],
  ] as const)('%j gets the hint %#', (text, open) => {
    expect(parseReply(text, open)).toEqual({ hint: hintText(open) })
  })
})
