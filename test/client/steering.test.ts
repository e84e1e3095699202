import { describe, expect, it } from 'vitest'
import type { ServiceEvent } from '../../contract/events.ts'
import { OpenRequests } from '../../client/steering.ts'
import { allowed, answered, asked, question } from './steering-events.ts'

const other: ServiceEvent = { event: 'answer', session_id: 's', seq: 9, data: 'hi' }

describe('steering - OpenRequests', () => {
  it.each([
    { name: 'a request opens', events: [asked('per_1', 1)], changes: ['opened per_1'], open: ['per_1'] },
    { name: 'its resolution closes it', events: [asked('per_1', 1), allowed('per_1', 2)], changes: ['opened per_1', 'resolved per_1 (known)'], open: [] },
    { name: 'a question and its answer', events: [question('que_1', 1), answered('que_1', 2)], changes: ['opened que_1', 'resolved que_1 (known)'], open: [] },
    { name: 'a request seen twice opens once', events: [asked('per_1', 1), asked('per_1', 1)], changes: ['opened per_1'], open: ['per_1'] },
    { name: 'a request after its resolution stays closed', events: [allowed('per_1', 2), asked('per_1', 1)], changes: ['resolved per_1 (unknown)'], open: [] },
    {
      name: 'a resolution seen twice counts once',
      events: [asked('per_1', 1), allowed('per_1', 2), allowed('per_1', 2)],
      changes: ['opened per_1', 'resolved per_1 (known)'],
      open: [],
    },
    { name: 'a rule decision no request announced', events: [allowed('per_9', 1)], changes: ['resolved per_9 (unknown)'], open: [] },
    {
      name: 'two open, one settled',
      events: [asked('per_1', 1), question('que_2', 2), allowed('per_1', 3)],
      changes: ['opened per_1', 'opened que_2', 'resolved per_1 (known)'],
      open: ['que_2'],
    },
    { name: 'other events change nothing', events: [other], changes: [], open: [] },
  ])('steering - $name', ({ events, changes, open }) => {
    const requests = new OpenRequests()
    const seen: string[] = []
    for (const event of events) {
      const change = requests.observe(event)
      if (change === undefined) continue
      if ('opened' in change) seen.push(`opened ${change.opened.event === 'question' ? change.opened.question.id : change.opened.permission.id}`)
      else
        seen.push(
          `resolved ${change.resolved.event === 'question_resolved' ? change.resolved.question_id : change.resolved.permission_id} (${change.request ? 'known' : 'unknown'})`,
        )
    }
    expect(seen).toEqual(changes)
    expect(requests.list().map((request) => (request.event === 'question' ? request.question.id : request.permission.id))).toEqual(open)
  })
})
