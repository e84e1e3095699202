import { describe, expect, it } from 'vitest'
import { RequestIndex } from '../../../gateway/opencode/request-index.ts'

describe('opencode request index - which session a request id is of', () => {
  it('request index - remembers, answers, and forgets the oldest past its bound (a remembered id counts as new)', () => {
    const index = new RequestIndex(2)
    index.remember('per_1', 'ses_a')
    index.remember('per_2', 'ses_a')
    index.remember('per_1', 'ses_b')
    index.remember('que_3', 'ses_c')
    expect([index.sessionOf('per_1'), index.sessionOf('per_2'), index.sessionOf('que_3')]).toEqual(['ses_b', undefined, 'ses_c'])
    expect(index.size).toBe(2)
  })
})
