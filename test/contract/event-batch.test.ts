import { describe, expect, it } from 'vitest'
import { joinEvents, splitEvents } from '../../contract/event-batch.ts'

// JSON.stringify escapes a line break inside a string, so a text with "\n" in its data stays one line.
const withNewline = JSON.stringify({ event: 'answer', data: 'two\nlines', seq: 2 })

describe('event batch', () => {
  it.each([
    ['one event is its JSON as it is', ['{"seq":1}'], '{"seq":1}'],
    ['several are one per line, in order', ['{"seq":1}', withNewline, '{"seq":3}'], `{"seq":1}\n${withNewline}\n{"seq":3}`],
  ])('%s', (_name, texts, message) => {
    expect(joinEvents(texts)).toBe(message)
    expect(splitEvents(message)).toEqual(texts)
  })

  it('a message of one event splits into that event alone', () => {
    expect(splitEvents(withNewline)).toEqual([withNewline])
  })
})
