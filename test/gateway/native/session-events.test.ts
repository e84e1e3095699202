import { describe, expect, it } from 'vitest'
import { wantsJsonPage } from '../../../gateway/native/session-events.ts'

describe('session events - JSON page or SSE by Accept', () => {
  it.each([
    [undefined, false],
    ['*/*', false],
    ['text/event-stream', false],
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['text/html, application/json;q=0.9', true],
    ['application/json, text/event-stream', false],
    ['application/jsonl', false],
  ])('events - Accept %j asks for the JSON page: %s', (accept, json) => {
    expect(wantsJsonPage(accept)).toBe(json)
  })
})
