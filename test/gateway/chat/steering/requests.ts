import type { OpenRequest } from '../../../../gateway/chat/steering/open-request.ts'

/** Open requests the steering tables read. */

/** Claude Code asking to run `touch canary`, with the three usual options. */
export const TOUCH_CANARY: Extract<OpenRequest, { kind: 'permission' }> = {
  kind: 'permission',
  request: {
    id: 'per_1',
    tool: { name: 'Bash', input: { command: 'touch canary' } },
    title: 'Bash: touch canary',
    options: ['allow_once', 'allow_always', 'deny'],
    expires_at: 1,
  },
}

/** Two questions, the second multi-select. */
export const SIZE_AND_SIDES: OpenRequest = {
  kind: 'question',
  request: {
    id: 'que_3',
    questions: [
      { question: 'Size?', options: [{ label: 'S' }, { label: 'L' }], multi_select: false },
      { question: 'Sides?', options: [{ label: 'Fries' }, { label: 'Salad' }], multi_select: true },
    ],
    expires_at: 1,
  },
}
