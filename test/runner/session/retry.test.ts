import { describe, expect, it } from 'vitest'
import { conversationLost, retryAfterExit, retryAfterFailedTurn, type ProcessFacts } from '../../../runner/session/retry.ts'

const fresh: ProcessFacts = { resumed: false, finishedATurn: false, heardSinceSend: false }
const resumed: ProcessFacts = { ...fresh, resumed: true }

describe('retry decisions', () => {
  it.each([
    ['a resumed CLI that found no conversation at its first answer: lost', resumed, true, true],
    ['the same after a turn ended in that process: not lost (it had one)', { ...resumed, finishedATurn: true }, true, false],
    ['a new conversation (not resumed): not lost', fresh, true, false],
    ['another failure of a resumed CLI: not lost', resumed, false, false],
  ] as const)('lost - %s', (_name, process, notFound, lost) => {
    expect(conversationLost(process, notFound)).toBe(lost)
  })

  it.each([
    ['a resumed CLI with no conversation, at its first answer: again, as a new conversation', resumed, true, false, { retry: true, resume: false }],
    ['the same, already retried once: no', resumed, true, true, { retry: false }],
    ['the same after a turn ended in that process: no', { ...resumed, finishedATurn: true }, true, false, { retry: false }],
    ['a new conversation (not resumed): no', fresh, true, false, { retry: false }],
    ['another failure of a resumed CLI: no', resumed, false, false, { retry: false }],
  ] as const)('retry - failed turn: %s', (_name, process, notFound, retried, decision) => {
    expect(retryAfterFailedTurn(process, notFound, retried)).toEqual(decision)
  })

  it.each([
    ['silent since the prompt: again, as it would have started', fresh, false, false, { retry: true }],
    ['silent, resumed: again, as it would have started', resumed, false, false, { retry: true }],
    ['silent, refused a new conversation it has stored: again, resuming it', fresh, true, false, { retry: true, resume: true }],
    ['silent, resumed, and said the id is in use: again, as it would have started', resumed, true, false, { retry: true }],
    ['silent but already retried: no', fresh, false, true, { retry: false }],
    ['it had answered something of the turn: no', { ...fresh, heardSinceSend: true }, false, false, { retry: false }],
    ['it had answered, and the id was in use: no', { ...fresh, heardSinceSend: true }, true, false, { retry: false }],
  ] as const)('retry - exit before the turn ended: %s', (_name, process, inUse, retried, decision) => {
    expect(retryAfterExit(process, inUse, retried)).toEqual(decision)
  })
})
