import type { ServiceEvent } from '../../contract/events.ts'

/** Steering events of session `s` as a runner publishes them, for the client's tests. */
export const asked = (id: string, seq: number): ServiceEvent => ({
  event: 'permission_request',
  session_id: 's',
  seq,
  data: 'touch canary',
  permission: {
    id,
    tool: { name: 'Bash', input: { command: 'touch canary' } },
    title: 'touch canary',
    options: ['allow_once', 'allow_always', 'deny'],
    expires_at: 1,
  },
})
export const question = (id: string, seq: number): ServiceEvent => ({
  event: 'question',
  session_id: 's',
  seq,
  data: 'Which colour?',
  question: { id, questions: [{ question: 'Which colour?', options: [{ label: 'Red' }], multi_select: false }], expires_at: 1 },
})
export const allowed = (id: string, seq: number): ServiceEvent => ({
  event: 'permission_resolved',
  session_id: 's',
  seq,
  data: 'allow_once',
  permission_id: id,
  decision: 'allow_once',
  source: 'client',
})
export const answered = (id: string, seq: number): ServiceEvent => ({
  event: 'question_resolved',
  session_id: 's',
  seq,
  data: 'Red',
  question_id: id,
  answers: [['Red']],
  source: 'client',
})
